# SPDX-License-Identifier: GPL-2.0-or-later
"""Samsung's SYSTOR 2019 slides ("Towards Building a High-Performance,
Scale-In Key-Value Storage System"): KV-SSDs scale linearly with their
number, locally and behind Linux's NVMe/TCP target.

The slides: "KVSSD *without cache* scales linearly providing comparable
performance" (YCSB-A and -B, Zipfian, up to 18 PM983s on one CPU of a
Mission Peak server), and "At least, one dedicated IO core is needed to
saturate one NVMe SSD *without any interference*". Here N = 1, 2, 4, 8
KV-SSDs (run-guest.sh --devices 8; the first N of them) run kvbench's
YCSB-B (95 % reads, 5 % updates, Zipfian 0.99, one thread per device) and
the measure is the aggregate device-time throughput: all operations over
the longest device's simulated time (kvbench's "aggregate" line), scaled
back by the dilation. Efficiency E(N) = aggregate(N) / (N x aggregate(1)).

The guest has one vCPU, not a core per device. The slides' premise -- a
core per SSD -- is met by dilating the devices (common.dilated()) until one
vCPU can keep eight of them busy: locally under icount x DILATION
(char-fig5's device and factor, not chosen from these slides), where a
YCSB-B operation costs the guest ~14 us and a device ~600 us (a 1.2 ms
read on one of two dies); over NVMe/TCP, where the two QEMUs run without
icount and a command costs the host guest milliseconds of real time, x
TCP_DILATION. A point is device-bound when its device time is at least
twice the guest's wall time (common.device_bound's rule); a point that is
not measures the guest's pace. The undilated local series (x1), the
slides' premise not met, is reported beside them, not judged.

Over NVMe/TCP the target guest (Linux 6.12, nvmet passthru, one subsystem
per KV-SSD on one port) serves the host guest, whose kvbench drives the
fabrics namespaces; after the host has gone, the target runs the same
steps on its local devices (the same clock mode). The host CPU per
command, as char-cpu reads it (busy jiffies of the whole guest,
/proc/stat), is measured over TCP in the host guest and locally in the
target guest, one device each: reported, not judged (no paper number).

Each N formats its N devices (not over TCP: nvmet passthru refuses Format
NVM, so there a device keeps the keys of the smaller N's loads) and loads
them (kvbench gives device d of N the keys k x N + d); then the guest
sleeps until the devices' backlog has drained and sends two Flushes (the first programs the page buffer, the second, after
that program, brings each device's clock to the present), so every step
starts with idle devices and its device time counts its own work only.
"""

import math

import common as C
import verdicts as VD
import versus as V

NAME = "systor-scaleout"
FIGURE = "Samsung SYSTOR '19 slides (scale-out, YCSB)"
PAPER = ("KV-SSDs without cache scale linearly (YCSB-A/B, Zipfian, up to 18 PM983s); at least "
         "one dedicated I/O core saturates one NVMe SSD")
NS = (1, 2, 4, 8)
DILATION = 20
TCP_DILATION = 10000
# criteria, written before the run (commit "reproduce: systor-scaleout, its
# criteria before its run"): the least efficiency over N = 2, 4, 8
CRIT_LINEAR = VD.at_least(0.9, 0.5)
TARGET = ("aggregate YCSB-B device-time throughput of N = 1, 2, 4, 8 KV-SSDs at least 0.9 x N "
          "times one device's, locally and over NVMe/TCP (criteria: the claims table, fixed in "
          "code before the run)")
SETUP = ("Device preset pm983 with channels=1, dies-per-channel=2, buffer-entries=8, "
         "blocks-per-die=48, latency off; 8 KV-SSDs in one guest with 1 vCPU (run-guest.sh "
         "--devices 8); kvbench --preset ycsb-b, one thread per device, the first N devices; "
         "local: icount, device times dilated x%d (and x1, reported); NVMe/TCP: Linux 6.12 "
         "target and host guests (run-guest.sh --fabrics-target / --fabrics-host, nvmet "
         "passthru), no icount, device times dilated x%d, the target's local devices after "
         "the host has gone. " % (DILATION, TCP_DILATION))
SCALE = ("slides: up to 18 SSDs; here 8 devices, 2 000 keys and 2 000 YCSB-B operations per "
         "device locally, 200 keys and 100 operations over NVMe/TCP, at --scale 1")

SERIES = {"local": "local, icount, x%d" % DILATION, "local-x1": "local, icount, x1",
          "tcp": "NVMe/TCP, x%d" % TCP_DILATION, "tcp-local": "target's local, x%d" %
          TCP_DILATION}
FACTOR = {"local": DILATION, "local-x1": 1, "tcp": TCP_DILATION, "tcp-local": TCP_DILATION}


def props(factor):
    p = C.dilated(dict(C.PM983_TIMING), factor) if factor != 1 else dict(C.PM983_TIMING)
    p.update({"preset": "pm983", "buffer-entries": 8, "channels": 1, "dies-per-channel": 2,
              "blocks-per-die": 48})
    return p


def _first(n):
    """The first n of $KVSSD_DEVICES, as kvbench --device flags."""
    return "$(echo $KVSSD_DEVICES | tr ' ' '\\n' | head -n %d | sed 's/^/--device /')" % n


def _steps(series, keys, ops, idle_s, program_s, cpu_ops, fmt):
    """One step per N: the first N devices formatted (fmt: not over TCP, where
    nvmet passthru refuses Format NVM) and loaded, a settle, the measured run;
    last the CPU step (one device, /proc/stat around kvbench). kvbench gives
    device d of N the keys k x N + d, so each N loads its own."""
    p = series + "-"
    fl = ("for d in $(echo $KVSSD_DEVICES | tr ' ' '\\n' | head -n %d); do kvssd format --yes "
          "-d $d >/dev/null || exit 1; done; echo '{\"formatted\":%d}'")
    steps = []
    for n in NS + ((1,) if cpu_ops else ()):
        cpu = cpu_ops and len(steps) == len(NS)
        cmds = [("format", fl % (n, n))] if fmt else []
        cmds += [("load", C.kvbench(preset="ycsb-b", keys=keys, no_run=True) + " " + _first(n)),
                 ("settle", C.settle(idle_s, program_s))]
        run = C.kvbench(preset="ycsb-b", keys=keys, ops=cpu_ops if cpu else ops,
                        no_load=True) + " " + _first(n)
        if cpu:
            cmds += [("c0", V.SNAP), ("bench", run), ("c1", V.SNAP)]
        else:
            cmds.append(("bench", run))
        steps.append(C.Step(p + ("cpu" if cpu else "n%d" % n), cmds, fresh=False,
                            meta={"n": n, "factor": FACTOR[series]}))
    return steps


def boots(scale):
    keys, ops = C.scaled(2000, scale, lo=200), C.scaled(2000, scale, lo=200)
    tkeys, tops = C.scaled(200, scale, lo=50), C.scaled(100, scale, lo=30)
    # local: a read is 1.2 ms x2 dies of device time at x20; sleep=off makes a
    # sleep free. TCP: x10000, a read 600 ms, 100 reads on two dies 30 s
    local = [C.Boot(NAME + "-" + s, _steps(s, keys, ops, 120 * f, 1 + f, 0, True),
                    props=props(f), devices=8, cpus=1, timeout_s=2400)
             for s, f in (("local", DILATION), ("local-x1", 1))]
    # erases left at the preset's 3.5 ms: the target's Format erases every
    # block, 48 per die x 35 s at x10000 would outlast any settle; YCSB-B on
    # a tenth-full device never collects garbage, so no measured step erases
    tp = props(TCP_DILATION)
    tp["erase-latency-ns"] = C.PM983_TIMING["erase-latency-ns"]
    target = C.Boot(NAME + "-target", _steps("tcp-local", tkeys, tops, 45, 8, 300, True), props=tp,
                    devices=8, cpus=1, kernel="trixie", timeout_s=2400)
    host = C.Boot(NAME + "-tcp", _steps("tcp", tkeys, tops, 45, 8, 300, False), cpus=1,
                  kernel="trixie", timeout_s=2400, target=target)
    return local + [host]


def _point(bench, factor):
    """ops, undilated aggregate ops/s in device time, device and wall seconds."""
    if not bench:
        return None
    agg = bench.get("aggregate")
    if agg:
        ph = next((p for p in agg.get("phases", []) if p.get("phase") == "run"), None)
        if not ph:
            return None
        ops, dt, wall = ph["ops"], ph.get("device_time_s"), ph["elapsed_s"]
    else:
        ph = C.phase(bench, "run")
        if not ph or not ph.get("device"):
            return None
        ops, dt, wall = ph["ops"], ph["device"].get("sim_time_s"), ph["elapsed_s"]
    if not ops or not dt or (isinstance(dt, float) and math.isnan(dt)):
        return None
    return {"ops": ops, "device_time_s": dt, "wall_s": wall,
            "ops_per_s": ops / dt * factor, "device_bound": dt >= 2 * wall}


def measure(raw):
    """{series: {"points": {N: point}, "cpu_us_per_op": x}}."""
    out = {}
    boot_of = {"local": NAME + "-local", "local-x1": NAME + "-local-x1",
               "tcp": NAME + "-tcp", "tcp-local": NAME + "-tcp"}
    for s, b in boot_of.items():
        pts = {}
        for n in NS:
            p = _point(C.part(raw, b, "%s-n%d" % (s, n), "bench"), FACTOR[s])
            if p:
                pts[str(n)] = p
        rec = {"points": pts}
        d = V.snap_delta(C.part(raw, b, s + "-cpu", "c0"), C.part(raw, b, s + "-cpu", "c1"))
        cpu = C.phase(C.part(raw, b, s + "-cpu", "bench") or {}, "run")
        if d and cpu and cpu.get("ops"):
            rec["cpu_us_per_op"] = d["cpu_s"] * 1e6 / cpu["ops"]
        out[s] = rec
    return out


def efficiency(points):
    """{N: E(N)} for the N with a point, against N = 1."""
    one = points.get("1")
    if not one:
        return {}
    return {n: p["ops_per_s"] / (int(n) * one["ops_per_s"]) for n, p in points.items()
            if n != "1"}


def _claim(series, pts, where):
    e = efficiency(pts)
    least = min(e.values()) if len(e) == len(NS) - 1 else None
    unbound = [n for n, p in sorted(pts.items(), key=lambda x: int(x[0]))
               if not p["device_bound"]]
    note = "E(N) " + ", ".join("%s: %.2f" % (n, e[n]) for n in sorted(e, key=int))
    note += "; aggregate ops/s " + ", ".join(
        "%s: %.0f" % (n, pts[n]["ops_per_s"]) for n in sorted(pts, key=int))
    if unbound:
        note += "; not device-bound at N = %s (the guest's pace)" % ", ".join(unbound)
    return VD.measure("KVSSD without cache scales linearly (%s; least E(N) = aggregate / (N x "
                      "one device's) over N = 2, 4, 8, YCSB-B device time)" % where, "linear",
                      least, CRIT_LINEAR, "%.2f", note=note, span=(0, math.inf))


def judge(m):
    return [_claim("local", m.get("local", {}).get("points", {}),
                   "local passthrough, icount, x%d" % DILATION),
            _claim("tcp", m.get("tcp", {}).get("points", {}),
                   "over NVMe/TCP, nvmet passthru, x%d" % TCP_DILATION)]


def rejudge(rec):
    return judge(rec.get("series") or {})


def explain(rec):
    m = rec.get("series") or {}
    e1 = efficiency(m.get("local-x1", {}).get("points", {}))
    el = efficiency(m.get("tcp-local", {}).get("points", {}))
    ct, cl = m.get("tcp", {}).get("cpu_us_per_op"), m.get("tcp-local", {}).get("cpu_us_per_op")
    return (
        "each KV-SSD is its own kvftl instance with its own dies, buffer and clock, and the "
        "dilation gives the guest's one vCPU room for eight devices (the slides' core per SSD), "
        "so what the aggregate can lose is the host side: the guest's time per command and, "
        "over TCP, the target's nvmet and both guests' network stacks. With the preset's times "
        "(x1) the vCPU is the limit: E(N) %s. The target's own devices without icount at "
        "x%d: E(N) %s. Host CPU per YCSB-B operation (busy jiffies of the whole guest, one "
        "device, no icount): %s us over NVMe/TCP (the initiator) against %s us by local "
        "passthrough (the target guest, after serving), %s" % (
            ", ".join("%s: %.2f" % (n, e1[n]) for n in sorted(e1, key=int)) or "n/a",
            TCP_DILATION,
            ", ".join("%s: %.2f" % (n, el[n]) for n in sorted(el, key=int)) or "n/a",
            VD.fnum(ct, "%.0f"), VD.fnum(cl, "%.0f"),
            ("%.1fx" % (ct / cl)) if ct and cl else "n/a"))


def analyze(raw, scale):
    m = measure(raw)
    claims = judge(m)
    rec = {"series": m, "claims": claims, "met": VD.overall(claims)}
    rec["ours"] = VD.summarize(claims) + "; " + "; ".join(
        "%s: %s" % (c["claim"].split(" (")[1].split(";")[0], c["ours"]) for c in claims)
    rec["why"] = explain(rec)
    return rec


def plot(rec, figdir):
    m = rec["series"]
    fig, ax = C.figure(1, (6.5, 3.8))
    for s, label in SERIES.items():
        pts = m.get(s, {}).get("points", {})
        one = pts.get("1")
        if not one:
            continue
        ns = sorted(int(n) for n in pts)
        ax.plot(ns, [pts[str(n)]["ops_per_s"] / one["ops_per_s"] for n in ns], marker="o",
                label=label)
    ax.plot(NS, NS, c="black", lw=0.8, ls="--", label="linear (slides)")
    ax.set_xlabel("KV-SSDs")
    ax.set_ylabel("aggregate / one device's")
    ax.set_xticks(NS)
    C.legend_outside(ax)
    C.caption(fig, "YCSB-B, one kvbench thread per device, device-time throughput; %s." %
              C.scale_text(rec))
    return [C.save(fig, figdir, "systor-scaleout.png")]
