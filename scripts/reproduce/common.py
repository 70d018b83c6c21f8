# SPDX-License-Identifier: GPL-2.0-or-later
"""Shared code of the reproduction experiments (scripts/reproduce/).

An experiment is a module exp_*.py with NAME, TITLE, PAPER, TARGET and
three functions:

  boots(scale)          -> [Boot]  the guest boots it needs (one per set of
                                   device properties), each a list of Steps
  analyze(raw, scale)   -> dict    key numbers, verdict and why, plot series
  plot(record, figdir)  -> [path]  PNG figures from the record alone

A Step is one measurement inside a booted guest: an optional fresh device
(Format NVM), then commands whose stdout is one JSON object each (kvbench
--json, kvssd stats --json, kvssd info --json). The guest script brackets
every command's output with markers, so the host parses each object by
name; a command that fails leaves its exit status and text instead.

Numbers come from the device: kvbench's "device" deltas of the statistics
log page and `kvssd stats`. Guest wall-clock numbers are used only where a
paper measured the host (and are labelled so): under TCG a guest CPU
instruction costs tens of host instructions.
"""

import contextlib
import json
import math
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RUN_GUEST = os.path.join(TOP, "scripts", "run-guest.sh")

# One Get Log Page (64-byte SQE, 16-byte CQE, two 4-byte doorbells) and its
# 4096-byte log: kvbench's own counter snapshot, inside every phase delta.
SQE_BYTES = 64
CQE_BYTES = 16
DOORBELL_BYTES_PER_CMD = 8

# Every reproduction boot runs QEMU in icount mode (run-guest.sh --icount):
# the virtual clock, which the device's simulated time is read from,
# advances by 2^ICOUNT_SHIFT ns per emulated guest instruction and skips
# idle time, so the guest's pace in device time does not depend on how
# fast this host emulates it (docs/guest.md). Shift 0 (one instruction per
# ns) is the fastest guest icount allows, the closest to the papers' Xeon
# hosts. run.py --icount overrides it (off: the host's real time, as
# before).
ICOUNT_SHIFT = 0

# Every boot pins the device's key-hash seed (the property hash-seed, on
# the KV-SSD and the block personality alike; an experiment may set its
# own). With the default, a secret drawn at every Format, the index layout
# and so every index cache hit and miss changed from run to run: one command
# sequence of 1500 Stores missed the firmware's index cache 57 to 84 times
# in eleven processes with fresh seeds, 71 times in every process with a
# pinned one, even with the think times jittered by 0.1 % (docs/reproduce.md,
# "Same answer twice").
HASH_SEED = 7

# run.py --index: the index design of every KV-SSD boot whose experiment
# names none (None: the preset's), so one experiment's numbers can be had
# under another design (kvftl/kv/index/kv_index.h) beside its own page.
INDEX = None


class Step:
    """One measurement: commands run back to back in the booted guest.

    name     unique in its boot, used as the key of the parsed output
    cmds     [(part, shell command)]; each prints one JSON object
    fresh    format the device first (every key erased, counters reset)
    meta     free-form parameters the analysis needs (value size, mode, ...)
    """

    def __init__(self, name, cmds, fresh=True, meta=None):
        self.name = name
        self.cmds = cmds
        self.fresh = fresh
        self.meta = meta or {}


class Boot:
    """One guest boot: device properties and the steps run in it."""

    def __init__(self, name, steps, props=None, latency=False, timeout_s=1800,
                 memory_mib=768, cpus=1, note="", block_props=None, devices=1, kernel=None,
                 target=None):
        self.name = name
        self.steps = steps
        self.props = dict(props or {})
        self.props.setdefault("hash-seed", HASH_SEED)
        if INDEX is not None:
            self.props.setdefault("index", INDEX)
        # None: the KV-SSD alone; a dict: also the block personality
        # (run-guest.sh --block, its --block-prop properties), as
        # $KVSSD_BLOCK_DEVICE in the guest
        self.block_props = None
        if block_props is not None:
            self.block_props = dict(block_props)
            self.block_props.setdefault("hash-seed", HASH_SEED)
        self.latency = latency
        # run-guest.sh --devices N (KV-SSDs kvssd0 ..., $KVSSD_DEVICES in the
        # guest) and --kernel K (None: run-guest.sh's default)
        self.devices = devices
        self.kernel = kernel
        # a Boot of its own for the NVMe/TCP target guest (run-guest.sh
        # --fabrics-target, its KV-SSDs and properties): this boot is then the
        # host guest, without a device of its own (--fabrics-host), whose
        # $KVSSD_DEVICES are the target's namespaces over TCP. The target runs
        # its steps after the host has gone (run_boot). Without icount: the
        # two guests' clocks would jump past NVMe/TCP's timeouts.
        self.target = target
        self.timeout_s = timeout_s
        self.memory_mib = memory_mib
        self.cpus = cpus
        self.note = note


# ---- command builders ---------------------------------------------------

def kvbench(**kw):
    """A kvbench command line with --json, no progress, seed 1.

    Keyword arguments are flags: key_size=4 -> --key-size 4; a value of True
    is a bare flag (no_run=True -> --no-run); None/False are left out.
    """
    args = ["kvbench", "--json", "--progress", "off"]
    kw.setdefault("seed", 1)
    order = ["preset"] + sorted(k for k in kw if k != "preset")
    for k in order:
        if k not in kw:
            continue
        v = kw[k]
        if v is None or v is False:
            continue
        flag = "--" + k.replace("_", "-")
        if v is True:
            args.append(flag)
        else:
            args += [flag, str(v)]
    return " ".join(shlex.quote(a) for a in args)


def observed_design(raw):
    """The index design(s) the KV-SSDs reported in kvbench's provenance (the
    configuration log page) during the boots: "hash", "hash/pm983" when they
    differ, None when no kvbench ran."""
    seen = set()
    for r in raw.values():
        for p in (r or {}).get("parts", {}).values():
            j = p.get("json") or {}
            devs = [((j.get("provenance") or {}).get("device") or {})]
            devs += [d.get("config") or {} for d in j.get("devices") or []
                     if isinstance(d, dict)]
            seen.update(d["index"] for d in devs
                        if d.get("command_set") == "kv" and d.get("index"))
    return "/".join(sorted(seen)) or None


def settle(idle_s, program_s):
    """A step's part that makes each device's clock the present before a measured
    phase: sleep until the devices' backlog has passed, Flush each (its page
    buffer is programmed), sleep through that program, Flush again. Under icount
    (sleep=off) the sleeps cost no host time."""
    fl = "for d in $KVSSD_DEVICES; do kvssd flush -d $d >/dev/null || exit 1; done"
    return ("sleep %d; %s; sleep %d; %s; echo '{\"settled\":1}'" % (idle_s, fl, program_s, fl))


STATS = "kvssd stats --json"
INFO = "kvssd info -d /dev/ng0n1 --json"
FORMAT = "kvssd format --yes"


def dilated(props, factor):
    """Device properties with every NAND/controller time stretched by factor.

    The emulated device is far faster than a TCG guest can drive it, so its
    simulated time would only mirror the guest's pace. Stretching tR, tPROG,
    tBERS and the firmware's per-command times (every fw-*-ns property in
    props, e.g. a preset's taken from COSMOS_TIMING or PM983_TIMING) and
    dividing the channel and DRAM-copy rates by the same factor keeps every
    ratio inside the device and makes it the bottleneck; ops per simulated
    second are then multiplied back by the factor. Rates are whole bytes per
    microsecond, so a rate below 1 after division is rounded up to 1 (the
    channel then runs relatively faster than the preset's). A firmware time
    the props leave out keeps the preset's undilated value on the device, so
    callers pass the preset's whole timing (the *_TIMING dicts below).
    """
    base = {
        "read-latency-ns": props.pop("read-latency-ns"),
        "program-latency-ns": props.pop("program-latency-ns"),
        "erase-latency-ns": props.pop("erase-latency-ns"),
        "channel-bytes-per-us": props.pop("channel-bytes-per-us"),
        "dram-copy-bytes-per-us": props.pop("dram-copy-bytes-per-us"),
    }
    out = dict(props)
    for k in ("read-latency-ns", "program-latency-ns", "erase-latency-ns"):
        out[k] = int(base[k] * factor)
    for k in FW_TIMES:
        if k in out:
            out[k] = int(out[k] * factor)
    for k in ("channel-bytes-per-us", "dram-copy-bytes-per-us"):
        out[k] = max(1, int(base[k] / factor))
    return out


# The firmware's per-command times (kvftl's firmware-time model:
# docs/properties.md, docs/kvftl.md "Firmware time"), each a time dilated() stretches.
FW_TIMES = ("fw-fetch-decode-ns", "fw-index-probe-ns", "fw-inline-fragment-ns",
            "fw-dma-setup-ns", "fw-completion-ns")

# Timing of kvftl's presets (include/kvftl/tunables.def, kvftl/kvftl.c), needed
# when an experiment dilates time: NAND, channel and copy rates, and the five
# firmware times.
COSMOS_TIMING = {"read-latency-ns": 60000, "program-latency-ns": 1000000,
                 "erase-latency-ns": 3500000, "channel-bytes-per-us": 200,
                 "dram-copy-bytes-per-us": 1000,
                 "fw-fetch-decode-ns": 2000, "fw-index-probe-ns": 1000,
                 "fw-inline-fragment-ns": 3000, "fw-dma-setup-ns": 600,
                 "fw-completion-ns": 1000}
PM983_TIMING = {"read-latency-ns": 60000, "program-latency-ns": 700000,
                "erase-latency-ns": 3500000, "channel-bytes-per-us": 800,
                "dram-copy-bytes-per-us": 2000,
                "fw-fetch-decode-ns": 600, "fw-index-probe-ns": 300,
                "fw-inline-fragment-ns": 1000, "fw-dma-setup-ns": 250,
                "fw-completion-ns": 400}


def scaled(n, scale, lo=1):
    """A count scaled by the run's scale factor, at least lo."""
    return max(lo, int(round(n * scale)))


def inline_commands(value_bytes, key_bytes=4):
    """NVMe commands of an inline (stock layout) Store: docs/host.md."""
    head = 24 - key_bytes if key_bytes <= 16 else 20
    if value_bytes <= head:
        return 1
    return 1 + math.ceil((value_bytes - head) / 28)


def ops_for_budget(cmds_per_op, budget, lo, hi):
    """Operations for a point so that it issues about budget commands."""
    return int(max(lo, min(hi, budget // max(1, cmds_per_op))))


# ---- the guest script and its output ------------------------------------

# The marker protocol, shared with scripts/demo.sh (through main() below):
# `rp PART CMD` prints "@@RP BEGIN PART", runs CMD with sh -c, prints
# "@@RP END PART STATUS" and returns CMD's status (so under set -e a failed
# command still ends its part before the script stops). parse_output() and
# console() read the markers back.
MARK = "@@RP"
RP_FUNCTION = ("rp() { part=$1; shift; echo \"%s BEGIN $part\"; "
               "sh -c \"$*\" && rc=0 || rc=$?; echo \"%s END $part $rc\"; return $rc; }"
               % (MARK, MARK))
_MARKER = re.compile(r"^%s (BEGIN|END) (\S+)(?: (-?\d+))?\s*$" % MARK)


def guest_script(boot, serve_s=None):
    """The sh script run inside the guest for one boot (serve_s: a fabrics
    target's, which first serves the host guest for at most serve_s s)."""
    lines = [
        "#!/bin/sh",
        "# generated by scripts/reproduce: one boot, " + boot.name,
        RP_FUNCTION,
        # the guest's init exports the KV namespace found by serial when two
        # controllers are attached (run-guest.sh --block)
        "export KVSSD_DEVICE=${KVSSD_DEVICE:-/dev/ng0n1}",
    ]
    if serve_s is not None:
        lines.append("kvssd-fabrics serve %d || echo '%s SERVE-FAILED'" % (serve_s, MARK))
    for st in boot.steps:
        if st.fresh:
            lines.append("%s >/dev/null 2>&1 || echo '%s FORMAT-FAILED %s'" %
                         (FORMAT, MARK, st.name))
        for part, cmd in st.cmds:
            lines.append("rp %s %s" % (shlex.quote(st.name + "/" + part),
                                       shlex.quote(cmd)))
    lines.append("exit 0")
    return "\n".join(lines) + "\n"


def run_guest_argv(boot, script_path, extra=None, icount=ICOUNT_SHIFT):
    """The scripts/run-guest.sh command line of one boot (icount: the
    --icount shift, None for the host's real time)."""
    argv = [RUN_GUEST, "--cpus", str(boot.cpus), "--memory", str(boot.memory_mib),
            "--timeout", str(boot.timeout_s)]
    if icount is not None:
        argv += ["--icount", str(icount)]
    if boot.kernel is not None:
        argv += ["--kernel", boot.kernel]
    if boot.target is not None:  # a fabrics host: no device of its own
        argv += list(extra or [])
        return argv + ["--script", script_path]
    if boot.devices != 1:
        argv += ["--devices", str(boot.devices)]
    for k in sorted(boot.props):
        argv += ["--prop", "%s=%s" % (k, boot.props[k])]
    if boot.latency:
        argv.append("--latency")
    if boot.block_props is not None:
        argv.append("--block")
        for k in sorted(boot.block_props):
            argv += ["--block-prop", "%s=%s" % (k, boot.block_props[k])]
    argv += list(extra or [])
    argv += ["--script", script_path]
    return argv


def parse_output(text):
    """Split a guest's output by markers into {part: {rc, json, text}}.

    A part whose text holds a JSON object gets it (the first object that
    decodes); text keeps what was printed, for the failure report.
    """
    out = {}
    cur = None
    buf = []
    for line in text.splitlines():
        m = _MARKER.match(line.strip())
        if m and m.group(1) == "BEGIN":
            cur, buf = m.group(2), []
            continue
        if m and m.group(1) == "END" and cur == m.group(2):
            body = "\n".join(buf)
            out[cur] = {"rc": int(m.group(3)) if m.group(3) else None,
                        "json": first_json(body), "text": body[-2000:]}
            if cur.endswith("/series"):  # a time series: one object per sample
                out[cur]["jsons"] = all_json(body)
            cur = None
            continue
        if cur is not None:
            buf.append(line)
    if cur is not None:  # the guest stopped inside a command
        body = "\n".join(buf)
        out[cur] = {"rc": None, "json": first_json(body), "text": body[-2000:]}
    return out


def console(lines):
    """The lines of a guest's output outside the parts, markers left out: what
    a person watches (the guest's own messages, not the JSON). A generator, so
    a live stream passes line by line."""
    cur = None
    for line in lines:
        m = _MARKER.match(line.strip())
        if m and m.group(1) == "BEGIN":
            cur = m.group(2)
        elif m and m.group(1) == "END" and cur == m.group(2):
            cur = None
        elif cur is None:
            yield line


def all_json(text):
    """Every JSON object printed on a line of its own, in order."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict):
                out.append(obj)
    return out


def first_json(text):
    dec = json.JSONDecoder()
    i = text.find("{")
    while i >= 0:
        try:
            obj, _ = dec.raw_decode(text[i:])
            if isinstance(obj, dict):
                return obj
        except ValueError:
            pass
        i = text.find("{", i + 1)
    return None


def run_boot(boot, rawdir, dry_run=False, log=sys.stderr, extra=None, icount=ICOUNT_SHIFT):
    """Boot the guest once, run the steps, save and return the raw record."""
    if boot.target is not None:  # NVMe/TCP: never icount (Boot.target)
        icount = None
    script_path = os.path.join(rawdir, boot.name + ".sh")
    argv = run_guest_argv(boot, script_path, extra, icount)
    print("$ " + " ".join(shlex.quote(a) for a in argv), file=log)
    if dry_run:
        print(guest_script(boot), file=log)
        return None
    os.makedirs(rawdir, exist_ok=True)
    with open(script_path, "w") as f:
        f.write(guest_script(boot))
    for attempt in range(3):
        if boot.target is None:
            raw = _run_boot_once(boot, rawdir, argv, log)
        else:
            raw = _run_fabrics_once(boot, rawdir, argv, extra, log)
        # no output at all: QEMU or the guest image could not be built or
        # started (e.g. being rebuilt at this moment); try again shortly
        if raw["parts"] or attempt == 2:
            return raw
        print("  boot %s produced nothing (exit %d); retrying in 60 s" % (boot.name, raw["rc"]),
              file=log)
        time.sleep(60)
    return raw


def _run_boot_once(boot, rawdir, argv, log):
    t0 = time.time()
    print("  boot %s: started %s UTC (%d step(s); output streams to %s)" % (
        boot.name, time.strftime("%H:%M:%S", time.gmtime(t0)), len(boot.steps),
        os.path.join(rawdir, boot.name + ".out")), file=log, flush=True)
    out_path = os.path.join(rawdir, boot.name + ".out")
    # stdout goes to a file as it arrives, so a long boot can be watched
    with open(os.path.join(rawdir, boot.name + ".console"), "w") as con, \
            open(out_path, "w") as out:
        p = subprocess.run(argv, stdout=out, stderr=con, text=True)
    wall = time.time() - t0
    with open(out_path) as f:
        stdout = f.read()
    parts = parse_output(stdout)
    icount = argv[argv.index("--icount") + 1] if "--icount" in argv else None
    raw = {"boot": boot.name, "props": boot.props, "latency": boot.latency,
           "block_props": boot.block_props, "icount_shift": icount,
           "argv": argv, "rc": p.returncode, "wall_s": round(wall, 1),
           "parts": parts,
           "steps": {st.name: st.meta for st in boot.steps}}
    with open(os.path.join(rawdir, boot.name + ".json"), "w") as f:
        json.dump(raw, f)
    failed = [k for k, v in parts.items() if v["rc"] != 0 or v["json"] is None]
    missing = [st.name + "/" + c[0] for st in boot.steps for c in st.cmds
               if st.name + "/" + c[0] not in parts]
    print("  boot %s: exit %d in %.0f s; %d parts, %d failed, %d missing" %
          (boot.name, p.returncode, wall, len(parts), len(failed), len(missing)), file=log,
          flush=True)
    return raw


def _run_fabrics_once(boot, rawdir, argv, extra, log):
    """A fabrics boot: the target guest (boot.target) in the background, the
    host guest (boot) in the foreground, joined by a unix socket; the
    target's parts are merged into the host's raw record (its step names
    must differ), its exit status and time under "target"."""
    tb = boot.target
    sockdir = tempfile.mkdtemp(prefix="kvssd-fab-")  # a socket path holds <= 107 bytes
    sock = os.path.join(sockdir, "wire.sock")
    fab = ["--fabrics-target", sock]
    tscript = os.path.join(rawdir, tb.name + ".sh")
    with open(tscript, "w") as f:
        f.write(guest_script(tb, serve_s=boot.timeout_s))
    targv = run_guest_argv(tb, tscript, list(extra or []) + fab, icount=None)
    print("$ " + " ".join(shlex.quote(a) for a in targv) + " &", file=log)
    t0 = time.time()
    tout = os.path.join(rawdir, tb.name + ".out")
    try:
        with open(os.path.join(rawdir, tb.name + ".console"), "w") as con, \
                open(tout, "w") as out:
            target = subprocess.Popen(targv, stdout=out, stderr=con, text=True)
        try:
            hargv = argv[:argv.index("--script")] + ["--fabrics-host", sock] + \
                argv[argv.index("--script"):]
            raw = _run_boot_once(boot, rawdir, hargv, log)
            # the target serves until the host has gone, then runs its steps
            try:
                rc = target.wait(timeout=tb.timeout_s + 120)
            except subprocess.TimeoutExpired:
                rc = None
        finally:
            if target.poll() is None:
                target.kill()
                target.wait()
    finally:
        with contextlib.suppress(OSError):
            os.unlink(sock)
        with contextlib.suppress(OSError):
            os.rmdir(sockdir)
    with open(tout) as f:
        tparts = parse_output(f.read())
    raw["parts"].update(tparts)
    raw["steps"].update({st.name: st.meta for st in tb.steps})
    raw["target"] = {"boot": tb.name, "props": tb.props, "latency": tb.latency,
                     "devices": tb.devices, "argv": targv, "rc": rc,
                     "wall_s": round(time.time() - t0, 1), "parts": len(tparts)}
    with open(os.path.join(rawdir, boot.name + ".json"), "w") as f:
        json.dump(raw, f)
    print("  boot %s: target exit %s, %d parts" % (tb.name, rc, len(tparts)), file=log,
          flush=True)
    return raw


def load_raw(rawdir, boots):
    """The saved raw records of an experiment's boots ({boot name: raw})."""
    out = {}
    for b in boots:
        path = os.path.join(rawdir, b.name + ".json")
        if os.path.exists(path):
            with open(path) as f:
                out[b.name] = json.load(f)
    return out


# ---- reading the numbers --------------------------------------------------

def part(raw, boot, step, name):
    """The JSON object of one command, or None when it did not produce one."""
    r = raw.get(boot)
    if not r:
        return None
    p = r["parts"].get(step + "/" + name)
    if not p or p["rc"] not in (0, None):
        return None
    return p["json"]


def phase(bench, name):
    """The phase object ("load" or "run") of a kvbench result."""
    if not bench:
        return None
    for ph in bench.get("phases", []):
        if ph.get("phase") == name:
            return ph
    return None


def best_phase(raw, boot, steps, name="load"):
    """The phase with the most ops per second among the "bench" results of
    steps (the rounds of one configuration) that ran without errors; None if
    none did. Rounds are interleaved, so a burst of load from elsewhere on
    the host slows one round, not the result."""
    rounds = [phase(part(raw, boot, step, "bench"), name) for step in steps]
    rounds = [ph for ph in rounds if ph and ph.get("device") and not ph["errors"]]
    if not rounds:
        return None
    return max(rounds, key=lambda p: p["ops_per_s"])


def admin_commands(dev):
    """Admin commands inside a phase delta (kvbench's own Get Log Page)."""
    sqes = dev["h2d_bytes"]["sqe"] // SQE_BYTES
    return max(0, sqes - dev["commands"])


def io_pcie_bytes(dev):
    """PCIe bytes of a store-only phase without kvbench's statistics read.

    The delta holds the Get Log Page that took the closing snapshot: its
    SQE, CQE, doorbells and its 4096-byte log (the only device-to-host data
    of a phase that only stores). Both are taken out.
    """
    adm = admin_commands(dev)
    return dev["pcie_bytes"] - adm * (SQE_BYTES + CQE_BYTES + DOORBELL_BYTES_PER_CMD) \
        - dev["d2h_bytes"]["data"]


def taf(pcie_bytes, value_bytes):
    """BandSlim's traffic amplification factor: PCIe bytes moved over the
    value bytes stored (the paper divides by the value, not key + value)."""
    return pcie_bytes / value_bytes if value_bytes else float("nan")


def per_op(x, ops):
    return x / ops if ops else float("nan")


def reduction(ours, base):
    """1 - ours/base, as a percentage."""
    if not base:
        return float("nan")
    return 100.0 * (1.0 - ours / base)


def device_bound(ph, factor=2.0):
    """True when the device's simulated time exceeds the guest's by factor.

    Then ops per simulated second measure the device, not TCG's pace.
    """
    dev = ph["device"]
    return dev["sim_time_s"] >= factor * ph["elapsed_s"]


def fmt(x, nd=1):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if isinstance(x, int):
        return "{:,}".format(x)
    return "{:,.{}f}".format(x, nd)


def size_label(b):
    if b >= 1024 and b % 1024 == 0:
        return "%dK" % (b // 1024)
    return str(b)


# ---- plotting -------------------------------------------------------------

def pyplot():
    """matplotlib's pyplot with a file-only backend."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({"figure.dpi": 100, "font.size": 9,
                         "axes.grid": True, "grid.alpha": 0.3})
    return plt


def figure(ncols=1, figsize=(6.5, 3.8)):
    """A new figure of ncols axes side by side: (figure, axes)."""
    return pyplot().subplots(1, ncols, figsize=figsize)


def plot_series(ax, series, field, **kw):
    """Plot field of every point of series ({"<number>": point}) over the
    numbers in order, with round markers; returns the numbers."""
    xs = sorted(int(k) for k in series)
    ax.plot(xs, [series[str(x)][field] for x in xs], marker="o", **kw)
    return xs


def save(fig, figdir, name):
    os.makedirs(figdir, exist_ok=True)
    path = os.path.join(figdir, name)
    # leave room at the bottom when caption() put text there
    fig.tight_layout(rect=(0, 0.07 if fig.texts else 0, 1, 1))
    fig.savefig(path)
    import matplotlib.pyplot as plt
    plt.close(fig)
    return path


def paper_mark(ax, x, y, text=None, **kw):
    """The paper's value at (x, y): a black star, labelled "paper" in the
    legend (or text beside it). Every figure with a paper's number marks it."""
    kw.setdefault("label", "paper")
    ax.plot([x], [y], marker="*", ms=11, c="black", ls="none", zorder=5, **kw)
    if text:
        ax.annotate(text, (x, y), textcoords="offset points", xytext=(6, 4), fontsize=7)


def paper_line(ax, y, text, **kw):
    """A paper's number that holds across the x axis: a dashed black line."""
    ax.axhline(y, ls="--", c="black", lw=0.9, label=text, **kw)


def legend_outside(ax, **kw):
    """The legend to the right of the axes, where it covers no data."""
    kw.setdefault("fontsize", 7)
    return ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, **kw)


def caption(fig, text):
    """The device, scale and kind of numbers, under the axes: every figure
    says what produced it."""
    fig.text(0.01, 0.005, text, fontsize=7, ha="left", va="bottom", wrap=True)
    fig.subplots_adjust(bottom=0.2)


def scale_text(rec):
    """The run's scale and clock, for a caption: "--scale 1.0, QEMU icount shift 0"."""
    shifts = sorted({str(b.get("icount_shift")) for b in rec.get("boots", [])})
    on = [x for x in shifts if x != "None"]
    clock = ("QEMU icount shift %s" % "/".join(on) if on else
             "QEMU without icount (host real time)" if shifts else "clock not recorded")
    if on and "None" in shifts:
        clock += ", NVMe/TCP boots without icount"
    return "--scale %s, %s" % (rec.get("scale", "?"), clock)


def bars(ax, groups, series, values, ylabel, logy=False, title=None):
    """Grouped bar chart: values[s][g] for each series s over groups g.

    The legend sits above the axes, in rows of up to four series, where it
    covers no bar; the title (when given) goes above the legend. A caller
    that wants the legend elsewhere calls legend_outside(ax) or ax.legend()
    afterwards, which replaces it."""
    n = len(series)
    width = 0.8 / max(1, n)
    for i, s in enumerate(series):
        xs = [g + (i - (n - 1) / 2) * width for g in range(len(groups))]
        ys = [values[s].get(name, float("nan")) for name in groups]
        ax.bar(xs, ys, width, label=s)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups)
    ax.set_ylabel(ylabel)
    if logy:
        ax.set_yscale("log")
    legend_above(ax, ncol=min(4, max(1, n)), title=title)


def legend_above(ax, ncol=4, title=None, **kw):
    """The legend in rows above the axes (where it covers no data), and the
    title, when given, above it (raised by the legend's rows)."""
    kw.setdefault("fontsize", 7)
    handles, labels = ax.get_legend_handles_labels()
    rows = -(-len(labels) // ncol) if labels else 0
    leg = ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=ncol,
                    borderaxespad=0.3, frameon=False, **kw) if labels else None
    if title:
        ax.set_title(title, pad=6 + 11 * rows)
    return leg


def main(argv):
    """The marker protocol for shell scripts (scripts/demo.sh):
      common.py rp-function   print the sh function rp (RP_FUNCTION)
      common.py console       copy stdin to stdout as it arrives, without the parts
    """
    if argv == ["rp-function"]:
        print(RP_FUNCTION)
        return 0
    if argv == ["console"]:
        # a serial console is not always valid UTF-8: such bytes show as U+FFFD
        lines = iter(sys.stdin.buffer.readline, b"")
        for line in console(line.decode("utf-8", "replace") for line in lines):
            sys.stdout.buffer.write(line.encode("utf-8"))
            sys.stdout.buffer.flush()
        return 0
    print("usage: common.py rp-function | console", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
