# SPDX-License-Identifier: GPL-2.0-or-later
"""KV-SSD versus block SSD + a host key-value store: the shared parts of the
comparison experiments (exp_char_fig2, _fig3_block, _fig4, _fig5a, _fig6a,
_fig7_block, _cpu, _traffic), after "What can Key-Value SSDs do for you?
(characterization of Samsung's KV-SSD)" ("KV-SSD: What Is It Good For?",
the characterization paper) and Samsung's SDC 2017 slides ("Key Value SSD
Explained").

The paper ran one PM983 with KV firmware and one with block firmware; here
two `-device kvssd` with identical properties but `command-set` (kv, or
nvm: the block personality, docs/kvftl.md) are attached to one guest
(run-guest.sh --block), so both personalities run on the same NAND model,
timing, page buffer and firmware-time rules; the guest finds them as
$KVSSD_DEVICE and $KVSSD_BLOCK_DEVICE.

Three kinds of numbers, never mixed in one ratio:

* device time -- the device's simulated latencies and clock from its
  statistics log (both personalities keep one);
* guest wall clock -- what the guest's clock says an operation took; under
  TCG every guest instruction is emulated (tens of host instructions each),
  so host-side work (RocksDB's memtable, compaction, ext4, the kernel's
  NVMe path) looks far slower against the device than on real hardware;
* guest CPU time -- busy jiffies of the whole guest (/proc/stat), so
  RocksDB's background threads, the kernel's block layer, jbd2 and
  kworkers count too. Under TCG it measures emulated work: a ratio between
  two engines in the same guest compares the instructions each executed
  (plus device-emulation time charged to the vCPU that rang the doorbell),
  not what either costs on a Xeon.

Verdicts: every experiment lists each quantitative claim of its figure as a
Claim with the paper's number, ours, and the criterion fixed in code before
the run (tolerance on magnitude, not only direction). overall() turns the
claims into yes / partly / no; a claim whose result follows from a
parameter chosen from the same figure is "by construction" and does not
count as a yes.
"""

import math
import shlex

import common as C

# ---- the guest side ------------------------------------------------------

# One boot holds both personalities (scripts/run-guest.sh --block): the
# KV-SSD as $KVSSD_DEVICE (its generic node), the block SSD as
# $KVSSD_BLOCK_DEVICE (/dev/nvmeXn1); the guest's init finds each by its
# controller's serial. Both get the same properties (Boot.props and
# Boot.block_props), so they share the NAND model, timing and page buffer.
BLK = "$KVSSD_BLOCK_DEVICE"
MNT = "/mnt/blk"          # ext4 on BLK, for RocksDB

# kvbench's store under test (host/kvbench, docs/kvbench.md): one command
# per engine, so a part's JSON is one engine's result.
ENGINE_FLAG = "engine"
# RocksDB's memtable scaled with the data: db_bench's 64 MiB write buffer
# holds every experiment's whole data set here (at most ~150 MB), so RocksDB
# would never flush or compact and no LSM tree would form; 4 MiB gives these
# data sets the flushes and L0->L1 compactions a large database has (its
# deeper levels, 256 MiB and up, still do not form). A scale choice made
# before any run, not fitted to a paper's number; every page section states it.
ROCKSDB_WRITE_BUFFER = 4 << 20
ROCKSDB_NOTE = ("RocksDB: kvbench's rocksdb engine (compression off, direct I/O, 8 MiB block "
                "cache) with a 4 MiB memtable instead of db_bench's 64 MiB, so that these small "
                "data sets flush and compact as a large database does (versus.py). ")
ENGINE_ARGS = {
    "kvssd": {},
    "rocksdb": {"rocksdb_dir": MNT + "/rocksdb", "rocksdb_write_buffer": ROCKSDB_WRITE_BUFFER},
    "rawhash": {"rawhash_dev": BLK},
}
# the kvssd engine's I/O path (sync: one command in flight; async: io_uring
# with a queue depth)
IO_FLAG = "io"

ENGINES = ("kvssd", "rocksdb", "rawhash")


def kb(engine, io="sync", qd=1, db=None, keep=False, **kw):
    """A kvbench command line for one engine (kvssd, rocksdb, rawhash).

    keep: open the store an earlier run left (rocksdb: the database in its
    directory; rawhash: its log, index rebuilt from it) instead of a fresh
    one; db: another RocksDB directory."""
    args = dict(kw)
    if engine != "kvssd":
        args[ENGINE_FLAG] = engine
        args.update(ENGINE_ARGS[engine])
        if db:
            args["rocksdb_dir"] = db
        if keep:
            args[engine + "_keep"] = True
    if io != "sync" or qd != 1:
        args[IO_FLAG] = io
        args["qd"] = qd
    return _unquote_vars(C.kvbench(**args))


def _unquote_vars(cmd):
    """shlex quoted $VARS of the guest's environment: let the shell expand them."""
    return cmd.replace("'$KVSSD_BLOCK_DEVICE'", '"$KVSSD_BLOCK_DEVICE"')


# After a whole-device discard the guest sleeps SETTLE_S seconds (virtual
# time: under icount, sleep=off, the idle guest's clock jumps ahead and the
# sleep costs no host time). With latency=off a step that follows a
# discard otherwise starts behind the discard's backlog or not, depending on
# how much virtual time the discard took: with the device's bottom half that
# depended on the host (char-fig5a's first point moved 9 % between two runs,
# 2026-11-28); with its queues on the virtual-clock timer it is fixed, but
# the step would still measure the backlog. Sleeping past it (a discard's
# simulated cost here is at most ~2 s) starts every next step on an idle
# device.
SETTLE_S = 10
# ext4 for RocksDB: no lazy-init writes in the background while measuring
# (lazy_itable_init=0 zeroes the inode tables now; the journal is zeroed now
# too), discard at mkfs (every unit unmapped first), noatime.
MKFS = ("mkfs.ext4 -F -q -E lazy_itable_init=0,lazy_journal_init=0,discard \"%s\" && "
        "sleep %d && mkdir -p %s && mount -o noatime \"%s\" %s && echo '{\"mounted\":1}'"
        % (BLK, SETTLE_S, MNT, BLK, MNT))
UMOUNT = "sync; umount %s && echo '{\"unmounted\":1}'" % MNT
DISCARD = ("blkdiscard -f \"%s\" && sleep %d && echo '{\"discarded\":1,\"settled_s\":%d}'"
           % (BLK, SETTLE_S, SETTLE_S))

# The block personality's statistics log (LID C0h, the same 4096-byte page
# as the KV personality's, include/kvssd/ext.h) through nvme-cli, as the
# first STATS_WORDS little-endian 8-byte words; stats_from_words() names
# them. `kvssd stats` opens KV namespaces only.
STATS_WORDS = 90
BLK_STATS = ("nvme get-log \"%s\" --log-id=0xc0 --log-len=4096 --raw-binary | od -An -tu8 -v -w8 "
             "| awk 'NR<=%d{printf \"%%s%%s\", (NR>1 ? \",\" : \"{\\\"log_u64\\\":[\"), $1} "
             "END{print \"]}\"}'" % (BLK, STATS_WORDS))
# Set Features FID C0h: any value zeroes every counter (ext.h)
BLK_RESET = ("nvme set-feature \"%s\" --feature-id=0xc0 --value=1 >/dev/null && "
             "echo '{\"reset\":1}'" % BLK)

# struct kvssd_stats_log after its 8-byte header, word by word
_XFER = ["sqe_fetch_bytes", "cqe_post_bytes", "doorbell_bytes", "mmio_other_bytes",
         "prp_list_bytes", "data_h2d_bytes", "data_d2h_bytes", "inline_bytes", "commands",
         "inline_commands", "key_stage_commands"]
_FW = ["host_bytes_in_inline", "host_bytes_in_dma", "host_bytes_out", "user_bytes_written",
       "stores", "retrieves", "deletes", "exists", "iterates", "nand_pages_read",
       "nand_pages_programmed", "nand_data_pages_programmed", "nand_blocks_erased",
       "memcpy_bytes", "padding_bytes", "dlt_backfills", "live_keys", "live_user_bytes",
       "live_nand_bytes", "index_cache_hits", "index_cache_misses", "index_pages_evicted_dirty",
       "bloom_negatives", "index_host_bytes", "gc_runs", "gc_relocated_bytes",
       "gc_foreground_stalls", "gc_stall_ns", "free_stripes", "total_stripes", "waf_milli",
       "space_amp_milli", "sim_now_ns"]
_OPS = ["store", "retrieve", "delete", "exist", "iterate"]
LOG_FIELDS = (_XFER + _FW + ["latency_%s_%s" % (op, f) for op in _OPS
                             for f in ("count", "p50_ns", "p99_ns", "p999_ns", "max_ns")] +
              ["capacity_bytes", "index_nand_bytes"] + ["latency_%s_sum_ns" % op for op in _OPS] +
              # version 3: firmware time (zeros from a version-2 device: reserved bytes)
              ["fw_cpu_ns"] + ["fw_%s_ns" % op for op in _OPS])


def stats_from_words(j):
    """A BLK_STATS object as `kvssd stats --json` names its fields (None if short)."""
    w = (j or {}).get("log_u64")
    if not w or len(w) < 1 + len(LOG_FIELDS):
        return None
    out = {"version": w[0] & 0xffffffff, "dma_unit_bytes": w[0] >> 32}
    out.update(zip(LOG_FIELDS, w[1:1 + len(LOG_FIELDS)]))
    return out


def blk_stats(raw, boot, step, name):
    return stats_from_words(C.part(raw, boot, step, name))


# One snapshot of the guest: CPU jiffies (busy = user + nice + system + irq
# + softirq + steal; idle = idle + iowait), the block device's I/O counters
# (its /sys/block/*/stat: sectors of 512 bytes; zeros without one), the
# uptime. Deltas of two snapshots bracket a command.
SNAP = ("set -- $(sed -n 's/^cpu  *//p' /proc/stat); b=$(($1+$2+$3+$6+$7+$8)); i=$(($4+$5)); "
        "set -- $(cat /sys/block/${KVSSD_BLOCK_DEVICE##*/}/stat 2>/dev/null || echo 0 0 0 0 0 0 0); "
        "echo \"{\\\"cpu_busy\\\":$b,\\\"cpu_idle\\\":$i,\\\"rd_ios\\\":$1,"
        "\\\"rd_sectors\\\":$3,\\\"wr_ios\\\":$5,\\\"wr_sectors\\\":$7,"
        "\\\"uptime_s\\\":$(cut -d' ' -f1 /proc/uptime)}\"")
USER_HZ = 100


def du(path):
    """JSON of the bytes under path: all files, and SST files alone."""
    return ("echo \"{\\\"dir_bytes\\\":$(du -sb %s | cut -f1),\\\"sst_bytes\\\":"
            "$(find %s -name '*.sst' -exec cat {} + | wc -c)}\"" % (path, path))


def fio(rw, bs, qd, size, io_size=None, offset=0, rwmix=None, repeats=False, name="j"):
    """fio on the raw block device, direct I/O through io_uring, JSON output.

    size: the span of the device addressed (bytes from offset); io_size: the
    bytes moved (default size); rw: write, randwrite, read, randread, randrw.
    Random offsets cover every block of the span once unless repeats (then
    they are drawn independently, as for a run over data written before).
    """
    a = ["fio", "--name=" + name, "--filename=" + BLK, "--direct=1", "--ioengine=io_uring",
         "--rw=" + rw, "--bs=%d" % bs, "--iodepth=%d" % qd, "--size=%d" % size,
         "--offset=%d" % offset, "--randrepeat=1", "--output-format=json"]
    if repeats:
        a.append("--norandommap")
    if io_size:
        a.append("--io_size=%d" % io_size)
    if rwmix is not None:
        a.append("--rwmixread=%d" % rwmix)
    return _unquote_vars(" ".join(shlex.quote(x) for x in a)).replace(
        "'--filename=$KVSSD_BLOCK_DEVICE'", '"--filename=$KVSSD_BLOCK_DEVICE"')


def fio_write_read(bs, qd, size, offset=0, seq=False):
    """One fio run of two jobs, one after the other (stonewall): bs-sized
    writes at random offsets covering [offset, offset + size) once, then
    reads of the same blocks in another random order (seq: both in LBA
    order). One fio start instead
    of two (a fio start costs seconds of emulated loading under TCG); the
    statistics log keeps writes and reads apart (its store and retrieve
    rows), so one reset before and one read after serve both."""
    g = ["fio", "--filename=" + BLK, "--direct=1", "--ioengine=io_uring", "--bs=%d" % bs,
         "--iodepth=%d" % qd, "--size=%d" % size, "--offset=%d" % offset, "--randrepeat=1",
         "--output-format=json"]
    w, r = ("write", "read") if seq else ("randwrite", "randread")
    a = g + ["--name=w", "--rw=" + w, "--name=r", "--stonewall", "--rw=" + r]
    return _unquote_vars(" ".join(shlex.quote(x) for x in a)).replace(
        "'--filename=$KVSSD_BLOCK_DEVICE'", '"--filename=$KVSSD_BLOCK_DEVICE"')


def block_props(props, lba_bytes=None):
    """The block personality's properties: the KV-SSD's, and lba-bytes if given."""
    out = dict(props)
    if lba_bytes:
        out["lba-bytes"] = lba_bytes
    return out


# ---- reading the numbers ---------------------------------------------------

def _first(d, names, default=None):
    for n in names:
        if d is not None and n in d and d[n] is not None:
            return d[n]
    return default


def h2d_bytes(dev):
    """Host-to-device bytes of a device delta (kvbench's "device" object)."""
    if not dev:
        return None
    h = dev.get("h2d_bytes")
    if isinstance(h, dict):
        return sum(v for v in h.values() if isinstance(v, (int, float)))
    return h


def stats_h2d(st):
    """Host-to-device bytes in a statistics-log snapshot (`kvssd stats`)."""
    keys = ("sqe_fetch_bytes", "doorbell_bytes", "mmio_other_bytes", "prp_list_bytes",
            "data_h2d_bytes")
    if not st or not all(k in st for k in keys):
        return None
    return sum(st[k] for k in keys)


def stats_delta(a, b, key):
    if not a or not b or key not in a or key not in b:
        return None
    return b[key] - a[key]


def sim_mean_us(st, op):
    """Mean simulated latency (us) of op ("store"/"retrieve": the nvm
    personality counts writes as store and reads as retrieve) in a stats
    snapshot taken after a reset."""
    if not st:
        return None
    n = st.get("latency_%s_count" % op)
    s = st.get("latency_%s_sum_ns" % op)
    if not n or s is None:
        return None
    return s / n / 1000.0


def snap_delta(a, b):
    """CPU seconds (busy), wall seconds and block-device bytes between two SNAPs."""
    if not a or not b:
        return None
    return {"cpu_s": (b["cpu_busy"] - a["cpu_busy"]) / float(USER_HZ),
            "wall_s": b["uptime_s"] - a["uptime_s"],
            "read_bytes": (b["rd_sectors"] - a["rd_sectors"]) * 512,
            "write_bytes": (b["wr_sectors"] - a["wr_sectors"]) * 512,
            "write_ios": b["wr_ios"] - a["wr_ios"], "read_ios": b["rd_ios"] - a["rd_ios"]}


def engine_phase(bench, name):
    """One engine's phase in a common shape, or None when it did not run
    cleanly: ops, guest wall-clock ops/s and mean latency, kvbench's own
    metrics (guest CPU per op from getrusage, host-to-device bytes per op
    from the device the engine ran on, WAF, space amplification)."""
    ph = C.phase(bench, name)
    if not ph and bench and bench.get("engines"):
        ph = C.phase(bench["engines"][0], name)
    if not ph or ph.get("errors") or ph.get("mismatches"):
        return None
    ops = ph["ops"]
    dev = ph.get("device")
    met = ph.get("metrics") or {}
    lat = ph.get("latency_us") or {}
    cpu = met.get("cpu_us_per_op")
    if cpu is None and ph.get("cpu_s") is not None and ops:
        cpu = ph["cpu_s"] * 1e6 / ops
    out = {"ops": ops, "wall_ops_per_s": ph["ops_per_s"], "elapsed_s": ph["elapsed_s"],
           "wall_mean_us": lat.get("mean"), "wall_p50_us": lat.get("p50"),
           "wall_p99_us": lat.get("p99"), "cpu_us_per_op_kvbench": cpu,
           "user_bytes": ph.get("user_bytes"), "footprint_bytes": ph.get("footprint_bytes"),
           "live_user_bytes": ph.get("live_user_bytes"),
           "h2d_bytes_per_op": met.get("h2d_bytes_per_op"), "waf": met.get("waf"),
           "device_waf": met.get("device_waf"), "space_amp_engine": met.get("space_amp_engine"),
           "space_amp_device": met.get("space_amp_device"), "sim_time_s": met.get("sim_time_s"),
           "sim_ops_per_s": met.get("ops_per_s_sim")}
    if dev and out["h2d_bytes_per_op"] is None:
        hb = h2d_bytes(dev)
        out["h2d_bytes_per_op"] = hb / ops if hb is not None and ops else None
    if dev:
        for k in ("sim_time_s", "sim_ops_per_s"):
            if out[k] is None:
                out[k] = dev.get(k)
    return out


def time_ratio(a, b):
    """a / b for two device times in us. A write the page buffer absorbs with
    no controller work completes in 0 ns: 0 / 0 is 1 (the same time), x / 0
    is infinite (stored as the string "inf" by finite(), printed "inf")."""
    if a is None or b is None:
        return None
    if b == 0:
        return 1.0 if a == 0 else math.inf
    return a / b


def finite(obj):
    """obj with every infinite float replaced by "inf" (results.json is JSON)."""
    if isinstance(obj, float) and math.isinf(obj):
        return "inf"
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [finite(v) for v in obj]
    return obj


def num(x):
    """A series number back from results.json: "inf" -> inf."""
    return math.inf if x == "inf" else x


def ratio(a, b):
    if a is None or b is None or b == 0 or (isinstance(a, float) and math.isnan(a)):
        return None
    return a / b


# ---- claims and verdicts: scripts/reproduce/verdicts.py (every experiment's) --
from verdicts import (BY_CONSTRUCTION, HOLDS, LABELS, PROJECTION, Criterion,  # noqa: E402,F401
                      at_least, at_most, band, by_construction, by_rule, claim, claims_table,
                      counts, revised,
                      factor_of, graded, label, measure, near, overall, projection, rule,
                      spread, stable, summarize, within)


def fnum(x, fmt="%.2f"):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if x == "inf" or (isinstance(x, float) and math.isinf(x)):
        return "inf" + (fmt[-1] if fmt.endswith("x") else "")
    return fmt % x
