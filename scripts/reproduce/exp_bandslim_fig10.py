# SPDX-License-Identifier: GPL-2.0-or-later
"""BandSlim Fig. 10: workloads B, C, D, M by transfer method.

kvbench presets B, C, D, M (4-byte keys in random order; value mixes of the
paper) stored by prp (baseline), inline (piggyback), adaptive with the
library's thresholds (threshold1 128 B, the paper's; threshold2 64 B, the
library's own: the paper gives no threshold2) and adaptive-cal, whose
thresholds `kvbench calibrate` measures in this guest first, as BandSlim
derived its thresholds from exploratory runs on its own platform. Traffic
and MMIO (doorbell) bytes are the device's counters. Response time is
device time: the mean simulated Store latency of kvftl's firmware model
(bandslim.py). Throughput is also given in the guest's wall clock
(labelled): ROUNDS interleaved rounds, each configuration's best round in
the table, every round in the claims (verdicts.stable).

prp-pci, inline-full and adaptive-full run the same workloads over
libkvssd's user-space PCI transport (kvbench --device pci:nvme0): whole
SQEs, so inline uses BandSlim's full layout (35 value bytes in the head, 56
per transfer) as the paper's driver does, and no kernel passthrough sits in
a command's path. Their throughput is compared among themselves (one
transport), their traffic against the same prp baseline. Where adaptive-full
picks hybrid it would send the tail in 56-byte full-layout transfers (stock
head with the full-tail bit, docs/protocol.md 7.3a), but the values of B,
C, D and M are at most 2 KiB, so it never picks hybrid here: inline or prp.
"""

import bandslim as B
import common as C
import verdicts as V

NAME = "bandslim-fig10"
FIGURE = "BandSlim Fig. 10"
PAPER = ("adaptive is the best on B, C, D and M; piggyback the worst on B, C, D but ~22 % "
         "faster than the baseline on W(M); on W(M) piggyback cuts PCIe traffic by 97.9 % and "
         "adaptive by 93.3 %; on W(C) adaptive moves 18 % more traffic than piggyback, is ~13x "
         "its throughput and ~2 % above the baseline")
TARGET = ("the claims table, on the paper's configuration (pci transport: prp-pci / inline-full "
          "/ adaptive-full): traffic from the counters, response time in device time, "
          "throughput also in guest wall clock")
SETUP = ("Device preset cosmos (BandSlim's Cosmos+ geometry), sync engine, queue depth 1 "
         "(as BandSlim's passthrough driver). ")

WORKLOADS = ["B", "C", "D", "M"]
MODES = ["prp", "inline", "adaptive", "adaptive-cal", "prp-pci", "inline-full", "adaptive-full"]
PCI_MODES = ["prp-pci", "inline-full", "adaptive-full"]  # one transport: compared among themselves
# BandSlim's Baseline / Piggyback / Adaptive: its driver writes whole SQEs, as the pci transport
PAPER_TRIO = ("prp-pci", "inline-full", "adaptive-full")
KEY = 4
STOCK_MODES = [m for m in MODES if m not in PCI_MODES]   # Linux passthrough: likewise
PCI = "pci:nvme0"  # libkvssd's user-space PCI transport (docs/host.md)
XFER = "/tmp/rp-xfer.conf"  # in the guest: the calibrated threshold file
TIE = 0.10  # within 10 % of the best counts as tied: TCG wall clock is noisy
ROUNDS = 5
# run.py's scale for this experiment without --scale (all.sh, and so the page):
# every experiment fits all.sh's hour at it (docs/reproduce.md, "Scale")
DEFAULT_SCALE = 0.2
SCALE = ("paper: 1 M Stores per workload; here 1 000 per workload and method (inline: "
         "250), 5 rounds, at --scale 1")


def bench(w, mode, n):
    if mode in PCI_MODES:
        base = {"prp-pci": "prp", "inline-full": "inline", "adaptive-full": "adaptive"}[mode]
        keys = max(200, n // 4) if base == "inline" else n
        return C.kvbench(preset=w, keys=keys, mode=base, device=PCI)
    if mode == "adaptive-cal":
        return C.kvbench(preset=w, keys=n, mode="adaptive", xfer_config=XFER)
    if mode == "inline":  # up to 67 commands per Store on W(C): fewer Stores
        return C.kvbench(preset=w, keys=max(200, n // 4), mode=mode)
    return C.kvbench(preset=w, keys=n, mode=mode)


def boots(scale):
    n = C.scaled(1000, scale, lo=200)
    cal = ("kvbench calibrate --samples %d --output %s --json" %
           (C.scaled(100, scale, lo=20), XFER))
    steps = [C.Step("calibrate", [("cal", cal)], meta={})]
    # ROUNDS interleaved rounds; each configuration's best round counts, so a
    # burst of load from elsewhere on the host slows one round, not the result
    steps += [C.Step("%s-%s-r%d" % (w, m, r), [("bench", bench(w, m, n))],
                     meta={"workload": w, "mode": m, "round": r})
              for r in range(ROUNDS) for w in WORKLOADS for m in MODES]
    return [C.Boot(NAME, steps, props=dict(B.TRANSFER_PROPS), latency=True, timeout_s=3000)]


def _round_phases(raw, w, m):
    """The load phase of each round of (workload, method) that ran without errors."""
    out = []
    for r in range(ROUNDS):
        ph = C.phase(C.part(raw, NAME, "%s-%s-r%d" % (w, m, r), "bench"), "load")
        out.append(ph if ph and ph.get("device") and not ph["errors"] else None)
    return out


def analyze(raw, scale):
    pts, rounds = {}, {}
    for w in WORKLOADS:
        for m in MODES:
            phs = _round_phases(raw, w, m)
            ok = [ph for ph in phs if ph]
            if not ok:
                continue
            ph = max(ok, key=lambda p: p["ops_per_s"])
            dev = ph["device"]
            lat = [B.store_latency_us(p) for p in ok]
            lat = [x for x in lat if x]
            rounds.setdefault(w, {})[m] = [p["ops_per_s"] if p else None for p in phs]
            pts.setdefault(w, {})[m] = {
                "ops": ph["ops"],
                # per Store: inline runs fewer Stores than the other methods
                "pcie_bytes": C.io_pcie_bytes(dev) / ph["ops"],
                "doorbell_bytes": (dev["h2d_bytes"]["doorbell"] -
                                   C.admin_commands(dev) * C.DOORBELL_BYTES_PER_CMD) / ph["ops"],
                "commands_per_op": C.per_op(dev["commands"], ph["ops"]),
                "guest_ops_per_s": ph["ops_per_s"],
                "guest_ops_per_s_rounds": rounds[w][m],
                # device time per Store (firmware model): the median of the rounds
                "store_latency_us": sorted(lat)[len(lat) // 2] if lat else None,
                "taf": C.io_pcie_bytes(dev) / (ph["user_bytes"] - ph["ops"] * KEY),
            }
    cal = C.part(raw, NAME, "calibrate", "cal")
    rec = {"series": pts}
    if cal:
        rec["calibrated"] = {"threshold1_bytes": cal.get("threshold1_bytes"),
                             "threshold2_bytes": cal.get("threshold2_bytes")}
    if not all(w in pts and len(pts[w]) == len(MODES) for w in WORKLOADS):
        rec.update(met=None, ours="incomplete run", why="some workloads did not run")
        return rec
    return judge(rec, pts)


# Criteria as the paper states its numbers, two-sided (they replaced one-sided or wide bands:
# the claims keep the earlier criterion and verdict beside them, verdicts.revised)
CRIT_M_ADA = V.rule("yes if 1.09-1.15x (the paper's 12 % gain +-3 points); partly if "
                    "1.06-1.24x (half to double the gain); else no",
                    lambda x: 1.09 <= x <= 1.15, lambda x: 1.06 <= x <= 1.24)
CRIT_C_ADA = V.rule("yes if 1.01-1.03x (the paper's 2 % gain +-1 point); partly if 1-1.05x "
                    "(not slower, at most 5 % faster); else no",
                    lambda x: 1.01 <= x <= 1.03, lambda x: 1.0 <= x <= 1.05)
# a ratio of two device times per Store: any positive number
RATIO_SPAN = (1e-3, 1e3)
RULE_DOORBELL = ("a PRP Store is one command whatever its value, and each command writes two "
                 "4-byte doorbells (SQ tail, CQ head): 8 doorbell bytes per Store on every "
                 "workload by the transfer rules")


def rejudge(rec):
    """The claims from a record's series (run.py --report-only --rejudge)."""
    pts = rec.get("series") or {}
    if not all(w in pts and len(pts[w]) == len(MODES) for w in WORKLOADS):
        return []
    return judge(dict(rec), pts)["claims"]


def judge(rec, pts):
    """The claims of Fig. 10 on the paper's configuration: the pci transport's
    prp-pci / inline-full / adaptive-full are BandSlim's Baseline / Piggyback /
    Adaptive (its driver writes whole SQEs), adaptive with the library's
    thresholds (threshold1 = 128 B, the paper's; threshold2 = 64 B, the
    library's: the paper gives none, and no value of B, C, D or M is past
    4 KiB, so it never applies). Traffic and response time are the device's
    (counters; firmware-model device time); throughput is also given in guest
    wall clock, judged over the rounds (stable: a verdict that flips between
    rounds is not one)."""
    base, pig, ada = PAPER_TRIO

    def t(w, m):
        return pts[w][m]["store_latency_us"]

    def traffic_cut(w, m):
        return C.reduction(pts[w][m]["pcie_bytes"], pts[w][base]["pcie_bytes"])

    def best(w, m, among, tie=0.02):
        return t(w, m) is not None and all(t(w, q) is not None for q in among) and \
            t(w, m) <= (1 + tie) * min(t(w, q) for q in among)

    def per_round(f):
        """f(w, mode -> ops/s of one round) for each round where all ran."""
        out = []
        for r in range(ROUNDS):
            vals = {w: {m: pts[w][m]["guest_ops_per_s_rounds"][r] for m in PAPER_TRIO}
                    for w in WORKLOADS}
            if all(v is not None for d in vals.values() for v in d.values()):
                out.append(f(vals))
        return out
    ada_best = [w for w in WORKLOADS if best(w, ada, PAPER_TRIO)]
    pig_worst = [w for w in ("B", "C", "D") if t(w, pig) is not None and
                 t(w, pig) >= max(t(w, q) for q in PAPER_TRIO)]
    m_gain = 100 * (1 - B.ratio(t("M", pig), t("M", base)))
    db = [pts[w][base]["doorbell_bytes"] for w in WORKLOADS]
    claims = [
        V.measure("W(M): Piggyback cuts PCIe traffic by 97.9 % vs Baseline (Fig. 10c)", "97.9 %",
                  traffic_cut("M", pig), B.points_near(97.9, 1, 3), "%.1f %%",
                  note="stock passthrough layout: %.1f %%" % traffic_cut("M", "inline")),
        V.measure("W(M): Adaptive cuts PCIe traffic by 93.3 % vs Baseline (Fig. 10c)", "93.3 %",
                  traffic_cut("M", ada), B.points_near(93.3, 2, 5), "%.1f %%",
                  note="threshold1 128 B as the paper's; stock passthrough: %.1f %%" %
                  traffic_cut("M", "adaptive")),
        V.measure("W(C): Adaptive moves 18 % more PCIe traffic than Piggyback (Fig. 10c)",
                  "1.18x", B.ratio(pts["C"][ada]["pcie_bytes"], pts["C"][pig]["pcie_bytes"]),
                  B.band_crit(1.08, 1.28, 1.0, 1.5), "%.2fx"),
        V.measure("Piggyback is the slowest on W(B), W(C) and W(D) (Fig. 10a/b; device time "
                  "per Store; workloads where it is)", "3 of 3", len(pig_worst),
                  V.rule("yes if 3 of 3; partly if 1 or 2; else no", lambda x: x == 3,
                         lambda x: x >= 1), "%d of 3",
                  note="slowest on: %s" % (", ".join(pig_worst) or "none")),
        V.measure("W(M): Piggyback's response time is about 22 % below Baseline's (Fig. 10a; "
                  "device time)", "-22 %", m_gain,
                  V.rule("yes if 12-32 % faster; partly if faster by 0-12 % or 32-50 %; else no",
                         lambda x: 12 <= x <= 32, lambda x: 0 < x <= 50), "%.1f %% faster",
                  note="Piggyback %.2f us, Baseline %.2f us per Store; the paper's gain is "
                  "host-measured (its driver's round trips)" % (t("M", pig), t("M", base))),
        V.stable("W(M): Piggyback's throughput is above Baseline's (Fig. 10b; guest wall clock, "
                 "piggyback / baseline per round)", "> 1x (about +22 %)",
                 per_round(lambda v: v["M"][pig] / v["M"][base]),
                 V.at_least(1.1, 1.0, "x"), "%.2fx"),
        V.measure("Adaptive is the best on every workload (Fig. 10a/b; device time per Store, "
                  "within 2 % of the fastest; workloads where it is)", "4 of 4", len(ada_best),
                  V.rule("yes if 4 of 4; partly if 2 or 3; else no", lambda x: x == 4,
                         lambda x: x >= 2), "%d of 4",
                  note="best on: %s" % (", ".join(ada_best) or "none")),
        V.stable("Adaptive is the best on every workload (Fig. 10b; guest wall clock, within "
                 "%d %% of the fastest; workloads where it is, per round)" % (TIE * 100),
                 "4 of 4", per_round(lambda v: sum(
                     1 for w in WORKLOADS if v[w][ada] >= (1 - TIE) * max(v[w].values()))),
                 V.rule("yes if 4 of 4; partly if 2 or 3; else no", lambda x: x == 4,
                        lambda x: x >= 2), "%d of 4"),
        V.revised(V.measure("W(M): Adaptive's throughput is 12 % above Piggyback's (Fig. 10b; "
                            "device time, piggyback / adaptive time per Store)", "1.12x",
                            B.ratio(t("M", pig), t("M", ada)), CRIT_M_ADA, "%.3fx",
                            span=RATIO_SPAN),
                  B.band_crit(1.02, 1.22, 1.0, 1.5).judge(B.ratio(t("M", pig), t("M", ada))),
                  B.band_crit(1.02, 1.22, 1.0, 1.5),
                  "1.02-1.22 accepted a sixth of the paper's 12 % gain as a yes; the gain is "
                  "now judged two-sided around 12 %"),
        V.measure("W(C): Adaptive's throughput is ~13x Piggyback's (Fig. 10b; device time)",
                  "~13x", B.ratio(t("C", pig), t("C", ada)),
                  V.near(13, 1.5, lambda x: x > 2, "above 2x"), "%.1fx"),
        V.revised(V.measure("W(C): Adaptive's throughput is ~2 % above Baseline's (Fig. 10b; "
                            "device time)", "1.02x", B.ratio(t("C", base), t("C", ada)),
                            CRIT_C_ADA, "%.3fx", span=RATIO_SPAN),
                  B.band_crit(0.99, 1.05, 0.95, 1.1).judge(B.ratio(t("C", base), t("C", ada))),
                  B.band_crit(0.99, 1.05, 0.95, 1.1),
                  "0.99-1.05 (partly from 0.95) accepted Adaptive slower than Baseline; the "
                  "paper says above, so below 1x is now a no"),
        V.by_rule("Baseline's MMIO traffic is the same on every workload (Fig. 10d; largest / "
                  "smallest doorbell bytes per Store)", "constant", "%.3fx" % (max(db) / min(db)),
                  V.at_most(1.01, 1.1, "x"), RULE_DOORBELL,
                  would_hold=V.at_most(1.01, 1.1, "x").judge(max(db) / min(db))),
        V.measure("Piggyback's MMIO traffic grows with the value sizes: largest on W(C) "
                  "(Fig. 10d; W(C) over the next largest workload)", "largest on W(C)",
                  pts["C"][pig]["doorbell_bytes"] / max(pts[w][pig]["doorbell_bytes"]
                                                      for w in WORKLOADS if w != "C"),
                  V.at_least(1.5, 1.0001, "x"), "%.2fx"),
    ]
    rec["claims"] = claims
    rec["met"] = V.overall(claims)
    table = [["workload", "method", "Stores", "commands/Store", "PCIe B/Store",
              "doorbell B/Store", "TAF (per value byte)", "device us/Store",
              "guest Stores/s (wall clock, best of %d)" % ROUNDS, "traffic cut vs prp"]]
    for w in WORKLOADS:
        for m in MODES:
            p = pts[w][m]
            table.append([w, m, p["ops"], "%.2f" % p["commands_per_op"],
                          "%.0f" % p["pcie_bytes"], "%.1f" % p["doorbell_bytes"],
                          "%.3f" % p["taf"], C.fmt(p["store_latency_us"], 2),
                          "%.0f" % p["guest_ops_per_s"],
                          "%.1f %%" % C.reduction(p["pcie_bytes"], pts[w]["prp"]["pcie_bytes"])])
    rec["table"] = table
    cal = rec.get("calibrated", {})
    rec["numbers"] = {
        "W(M)_inline_full_traffic_cut_pct": round(traffic_cut("M", pig), 1),
        "W(M)_adaptive_full_traffic_cut_pct": round(traffic_cut("M", ada), 1),
        "W(M)_inline_traffic_cut_pct (stock passthrough)": round(traffic_cut("M", "inline"), 1),
        "W(M)_adaptive_traffic_cut_pct (stock passthrough)": round(traffic_cut("M", "adaptive"), 1),
        "W(M)_adaptive_cal_traffic_cut_pct (stock passthrough, calibrated)": round(
            traffic_cut("M", "adaptive-cal"), 1),
        "calibrated_threshold1_bytes": cal.get("threshold1_bytes"),
        "calibrated_threshold2_bytes": cal.get("threshold2_bytes"),
    }
    for w in WORKLOADS:
        rec["numbers"]["W(%s)_device_us_per_store (prp-pci / inline-full / adaptive-full)" % w] = \
            " / ".join(C.fmt(t(w, m), 2) for m in PAPER_TRIO)
    rec["ours"] = ("%s. W(M) traffic cut: piggyback %.1f %%, adaptive %.1f %%; device time per "
                   "Store W(M) baseline / piggyback / adaptive %s us; adaptive best (device time) "
                   "on %s" % (V.summarize(claims), traffic_cut("M", pig), traffic_cut("M", ada),
                              " / ".join(C.fmt(t("M", m), 2) for m in PAPER_TRIO),
                              ", ".join(ada_best) or "none"))
    rec["why"] = (
        "The paper's configuration is the pci transport (libkvssd writes whole SQEs as "
        "BandSlim's driver does: 35 value bytes in the head, 56 per transfer); adaptive uses "
        "the library's thresholds: threshold1 = 128 B is the paper's, threshold2 = 64 B is the "
        "library's (the paper gives no threshold2; no value of these workloads is past 4 KiB, "
        "so it never applies). Traffic is the device's counters. Response time is device time "
        "(kvftl's firmware model, cosmos preset: fetch and decode 2 us, index probe 1 us, DMA "
        "setup 0.6 us per 4 KiB, completion 1 us, 3 us per inline transfer command), so a "
        "piggybacked Store of <= 35 B saves only the DMA setup, and each transfer command costs "
        "more than the DMA it replaces: the paper's host-measured +22 %% for Piggyback on W(M) "
        "comes from its host path, which device time does not have. Throughput in guest wall "
        "clock (best of %d rounds; claims judged per round) counts the emulated guest's "
        "instructions per Store, where each extra command is one more passthrough/pci round "
        "trip. The stock passthrough series (prp, inline, adaptive, adaptive-cal with this "
        "guest's calibrated thresholds %s / %s B) are kept in the table, not mixed into the "
        "claims" % (ROUNDS, cal.get("threshold1_bytes"), cal.get("threshold2_bytes")))
    return rec


def plot(rec, figdir):
    pts = rec["series"]
    fig, (a0, a1, a2, a3) = C.figure(4, (19, 4.0))
    trio = list(PAPER_TRIO)
    rt = {m: {w: pts[w][m]["store_latency_us"] / pts[w][PAPER_TRIO[0]]["store_latency_us"]
              for w in pts if pts[w][m].get("store_latency_us")} for m in trio}
    tput = {m: {w: pts[w][m]["guest_ops_per_s"] / pts[w][PAPER_TRIO[0]]["guest_ops_per_s"]
                for w in pts} for m in trio}
    traf = {m: {w: pts[w][m]["pcie_bytes"] for w in pts} for m in MODES}
    mmio = {m: {w: pts[w][m]["doorbell_bytes"] for w in pts} for m in MODES}
    C.bars(a0, WORKLOADS, trio, rt, "device time per Store / Baseline's (linear)",
           title="Fig. 10a: response time (device time)")
    C.bars(a1, WORKLOADS, trio, tput, "guest Stores/s / Baseline's (linear)",
           title="Fig. 10b: throughput (guest wall clock, best round)")
    C.bars(a2, WORKLOADS, MODES, traf, "PCIe bytes per Store (device counters)", logy=True,
           title="Fig. 10c: PCIe traffic")
    C.bars(a3, WORKLOADS, MODES, mmio, "doorbell (MMIO) bytes per Store", logy=True,
           title="Fig. 10d: MMIO traffic")
    for a in (a0, a1):
        a.axhline(1.0, color="grey", lw=0.8)
    wm = WORKLOADS.index("M")
    B.mark(a0, wm, 0.78, "paper: piggyback -22 %")
    B.mark(a1, wm, 1.22, "paper: ~+22 %")
    if "M" in pts:
        prp = pts["M"][PAPER_TRIO[0]]["pcie_bytes"]
        B.mark(a2, wm, prp * (1 - 0.979), "paper: -97.9 %")
        B.mark(a2, wm + 0.3, prp * (1 - 0.933), "paper: -93.3 %")
    ops = sorted({pts[w][m]["ops"] for w in pts for m in pts[w]})
    fig.suptitle(B.DEVICE_CAPTION + "; %s Stores per workload and method (inline: the fewer) "
                 "at scale %s; -pci/-full: the pci transport (BandSlim's layout)" % (
                     " or ".join("%d" % n for n in ops) or "?", rec.get("scale", 1)),
                 fontsize=8)
    return [C.save(fig, figdir, "bandslim-fig10-workloads.png")]
