# SPDX-License-Identifier: GPL-2.0-or-later
"""BandSlim Fig. 10: workloads B, C, D, M by transfer method.

kvbench presets B, C, D, M (4-byte keys in random order; value mixes of the
paper) stored by prp (baseline), inline (piggyback), adaptive with the
paper's thresholds (threshold1 128 B, threshold2 64 B: the library's
defaults) and adaptive-cal, whose thresholds `kvbench calibrate` measures
in this guest first, as BandSlim derived its thresholds from exploratory
runs on its own platform. Traffic and MMIO (doorbell) bytes are the
device's counters. Throughput: the paper measured it on the host, where
every extra command is one more synchronous passthrough round trip; the
device's simulated time cannot see that cost (a command's device time is
nanoseconds), so throughput here is the guest's wall clock (labelled):
ROUNDS interleaved rounds, each configuration's best round.

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

import common as C

NAME = "bandslim-fig10"
FIGURE = "BandSlim Fig. 10"
PAPER = ("adaptive has the best throughput on B, C, D and M; on W(M) adaptive cuts PCIe "
         "traffic by 93.3 % and piggyback by 97.9 % vs the baseline")
TARGET = "adaptive best or tied on each workload; W(M) traffic cut >= 90 % by adaptive"
SETUP = ("Device preset cosmos (BandSlim's Cosmos+ geometry), sync engine, queue depth 1 "
         "(as BandSlim's passthrough driver). ")

WORKLOADS = ["B", "C", "D", "M"]
MODES = ["prp", "inline", "adaptive", "adaptive-cal", "prp-pci", "inline-full", "adaptive-full"]
PCI_MODES = ["prp-pci", "inline-full", "adaptive-full"]  # one transport: compared among themselves
STOCK_MODES = [m for m in MODES if m not in PCI_MODES]   # Linux passthrough: likewise
PCI = "pci:nvme0"  # libkvssd's user-space PCI transport (docs/host.md)
XFER = "/tmp/rp-xfer.conf"  # in the guest: the calibrated threshold file
TIE = 0.10  # within 10 % of the best counts as tied: TCG wall clock is noisy
ROUNDS = 5
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
    return [C.Boot(NAME, steps, props={"preset": "cosmos"}, timeout_s=3000)]


def analyze(raw, scale):
    pts = {}
    for w in WORKLOADS:
        for m in MODES:
            ph = C.best_phase(raw, NAME, ["%s-%s-r%d" % (w, m, r) for r in range(ROUNDS)])
            if not ph:
                continue
            dev = ph["device"]
            pts.setdefault(w, {})[m] = {
                "ops": ph["ops"],
                # per Store: inline runs fewer Stores than the other methods
                "pcie_bytes": C.io_pcie_bytes(dev) / ph["ops"],
                "doorbell_bytes": (dev["h2d_bytes"]["doorbell"] -
                                   C.admin_commands(dev) * C.DOORBELL_BYTES_PER_CMD) / ph["ops"],
                "commands_per_op": C.per_op(dev["commands"], ph["ops"]),
                "guest_ops_per_s": ph["ops_per_s"],
                "sim_ops_per_s": dev["sim_ops_per_s"],
                "taf": C.io_pcie_bytes(dev) / ph["user_bytes"],
            }
    cal = C.part(raw, NAME, "calibrate", "cal")
    rec = {"series": pts}
    if cal:
        rec["calibrated"] = {"threshold1_bytes": cal.get("threshold1_bytes"),
                             "threshold2_bytes": cal.get("threshold2_bytes")}
    if not all(w in pts and len(pts[w]) == len(MODES) for w in WORKLOADS):
        rec.update(met=None, ours="incomplete run", why="some workloads did not run")
        return rec
    table = [["workload", "method", "Stores", "commands/Store", "PCIe B/Store",
              "doorbell B/Store",
              "TAF", "guest Stores/s (wall clock, best of %d)" % ROUNDS, "traffic cut vs prp"]]
    best_ok, same_as = {}, {}
    for w in WORKLOADS:
        top_m = max(STOCK_MODES, key=lambda m: pts[w][m]["guest_ops_per_s"])
        top = pts[w][top_m]["guest_ops_per_s"]
        a, t = pts[w]["adaptive-cal"], pts[w][top_m]
        # the same commands and bytes per Store as the fastest method: a tie by
        # construction, whatever the noisy wall clock says
        same_as[w] = top_m if (top_m != "adaptive-cal" and
                               abs(a["commands_per_op"] - t["commands_per_op"]) < 1e-9 and
                               abs(a["pcie_bytes"] - t["pcie_bytes"]) < 1e-6) else None
        best_ok[w] = a["guest_ops_per_s"] >= (1 - TIE) * top or same_as[w] is not None
        for m in MODES:
            p = pts[w][m]
            table.append([w, m, p["ops"], "%.2f" % p["commands_per_op"],
                          "%.0f" % p["pcie_bytes"], "%.1f" % p["doorbell_bytes"],
                          "%.3f" % p["taf"], "%.0f" % p["guest_ops_per_s"],
                          "%.1f %%" % C.reduction(p["pcie_bytes"], pts[w]["prp"]["pcie_bytes"])])
    rec["table"] = table
    cut_m = C.reduction(pts["M"]["adaptive"]["pcie_bytes"], pts["M"]["prp"]["pcie_bytes"])
    cut_m_inline = C.reduction(pts["M"]["inline"]["pcie_bytes"], pts["M"]["prp"]["pcie_bytes"])
    cut_m_cal = C.reduction(pts["M"]["adaptive-cal"]["pcie_bytes"], pts["M"]["prp"]["pcie_bytes"])
    t1 = rec.get("calibrated", {}).get("threshold1_bytes")
    rec["numbers"] = {"W(M)_adaptive_traffic_cut_pct": round(cut_m, 1),
                      "W(M)_inline_traffic_cut_pct": round(cut_m_inline, 1),
                      "W(M)_adaptive_cal_traffic_cut_pct": round(cut_m_cal, 1),
                      "calibrated_threshold1_bytes": t1,
                      "calibrated_threshold2_bytes": rec.get("calibrated", {}).get(
                          "threshold2_bytes")}
    for w in WORKLOADS:
        rec["numbers"]["W(%s)_adaptive_cal_best_or_tied" % w] = best_ok[w]
    rec["ours"] = ("W(M): adaptive (paper's 128 B threshold) cuts traffic %.1f %%, inline "
                   "%.1f %%; adaptive with this guest's calibrated threshold (%s B) is best or "
                   "tied (within %d %%, guest wall clock) on %s" % (
                       cut_m, cut_m_inline, t1, TIE * 100,
                       ", ".join(w for w in WORKLOADS if best_ok[w]) or "none"))
    # one adaptive configuration has to do both to meet the target
    paper_best = {w: pts[w]["adaptive"]["guest_ops_per_s"] >= (1 - TIE) * max(
        pts[w][m]["guest_ops_per_s"] for m in STOCK_MODES) for w in WORKLOADS}
    rec["numbers"].update({"W(%s)_adaptive_best_or_tied" % w: paper_best[w] for w in WORKLOADS})
    # the full layout over the pci transport: adaptive-full against that transport's methods
    cut_m_full = C.reduction(pts["M"]["adaptive-full"]["pcie_bytes"], pts["M"]["prp"]["pcie_bytes"])
    cut_m_inline_full = C.reduction(pts["M"]["inline-full"]["pcie_bytes"],
                                    pts["M"]["prp"]["pcie_bytes"])
    full_best = {w: pts[w]["adaptive-full"]["guest_ops_per_s"] >= (1 - TIE) * max(
        pts[w][m]["guest_ops_per_s"] for m in PCI_MODES) for w in WORKLOADS}
    rec["numbers"].update({"W(M)_adaptive_full_traffic_cut_pct": round(cut_m_full, 1),
                           "W(M)_inline_full_traffic_cut_pct": round(cut_m_inline_full, 1)})
    rec["numbers"].update({"W(%s)_adaptive_full_best_or_tied_on_pci" % w: full_best[w]
                           for w in WORKLOADS})
    full_ok = cut_m_full >= 90.0 and all(full_best.values())
    rec["ours"] += ("; full layout over the pci transport: W(M) cut %.1f %% (adaptive-full), "
                    "%.1f %% (inline-full); adaptive-full best or tied among that transport's "
                    "methods on %s" % (cut_m_full, cut_m_inline_full,
                                       ", ".join(w for w in WORKLOADS if full_best[w]) or "none"))
    both = ((cut_m >= 90.0 and all(paper_best.values())) or
            (cut_m_cal >= 90.0 and all(best_ok.values())) or full_ok)
    rec["met"] = True if both else (
        "partly" if cut_m >= 90.0 or all(best_ok.values()) else False)
    losers = [w for w in WORKLOADS if not best_ok[w]]
    full_why = ("With the full layout over libkvssd's pci transport (BandSlim's driver fills "
                "CDW4-9 too), adaptive with the paper's 128 B threshold cuts W(M) traffic by "
                "%.1f %% and inline by %.1f %% (paper: 93.3 %% and 97.9 %%), and adaptive is "
                "best or tied among that transport's methods on %s (guest wall clock, best of "
                "%d rounds; no kernel passthrough in a command's path there; the stock series are "
                "compared among themselves likewise). " % (
                    cut_m_full, cut_m_inline_full,
                    ", ".join(w for w in WORKLOADS if full_best[w]) or "none", ROUNDS))
    full_losers = [w for w in WORKLOADS if not full_best[w]]
    if full_losers:
        us_per_cmd = 1e6 / max(pts[w]["prp-pci"]["guest_ops_per_s"] for w in WORKLOADS)
        full_why += ("On %s it is behind prp-pci: there too a command costs ~%.0f us of guest "
                     "wall clock under TCG (prp-pci: one command per Store) while a 4 KiB DMA "
                     "costs little, so adaptive's extra commands (%s per Store) cost more time "
                     "than the DMA units they save. " % (
                         ", ".join(full_losers), us_per_cmd,
                         ", ".join("%s %.2f" % (w, pts[w]["adaptive-full"]["commands_per_op"])
                                   for w in full_losers)))
    rec["why"] = full_why + ("On stock passthrough no single threshold does both: the paper's 128 B gives the W(M) cut "
                  "but is best or tied only on %s; the calibrated one is best or tied on %s "
                  "but sends W(M) by PRP. " % (
                      ", ".join(w for w in WORKLOADS if paper_best[w]) or "none",
                      ", ".join(w for w in WORKLOADS if best_ok[w]) or "none")
                  if not ((cut_m >= 90.0 and all(paper_best.values())) or
                          (cut_m_cal >= 90.0 and all(best_ok.values()))) else "") + (
                  "Traffic is the device's counters. Throughput is "
                  "the guest's wall clock: "
                  "under TCG a passthrough command costs ~100 us of emulated kernel work while "
                  "a 4 KiB DMA costs little, so piggybacking pays off only for values that fit "
                  "one command; calibrate puts threshold1 at %s B here against 128 B on "
                  "Cosmos+ (adaptive with the paper's 128 B: %.0f Stores/s on W(M) against "
                  "prp's %.0f). The "
                  "paper's 93.3 %% W(M) cut is for its 128 B threshold; with this guest's "
                  "threshold the cut is %.1f %%. inline's W(M) cut (%.1f %% vs 97.9 %%) is "
                  "lower because stock passthrough's layout carries 20 value bytes in a head "
                  "and 28 per transfer, against 35 and 56 in BandSlim's driver" % (
                      t1, pts["M"]["adaptive"]["guest_ops_per_s"],
                      pts["M"]["prp"]["guest_ops_per_s"], cut_m_cal, cut_m_inline) + (
                      "" if not losers else
                      "; adaptive-cal is behind the best on %s by more than %d %% (TCG timing "
                      "noise on a shared 2-core host)" % (", ".join(losers), TIE * 100))) + "".join(
                          "; on W(%s) adaptive-cal issues exactly %s's commands and bytes per "
                          "Store (a tie by construction) but measured %.0f vs %.0f Stores/s: "
                          "that gap is the shared host's timing noise" % (
                              w, same_as[w], pts[w]["adaptive-cal"]["guest_ops_per_s"],
                              pts[w][same_as[w]]["guest_ops_per_s"])
                          for w in WORKLOADS if same_as[w] and pts[w]["adaptive-cal"][
                              "guest_ops_per_s"] < (1 - TIE) * pts[w][same_as[w]]["guest_ops_per_s"])
    return rec


def plot(rec, figdir):
    pts = rec["series"]
    fig, (a1, a2, a3) = C.figure(3, (14, 3.8))
    tput = {m: {w: pts[w][m]["guest_ops_per_s"] for w in pts} for m in MODES}
    traf = {m: {w: pts[w][m]["pcie_bytes"] for w in pts} for m in MODES}
    mmio = {m: {w: pts[w][m]["doorbell_bytes"] for w in pts} for m in MODES}
    C.bars(a1, WORKLOADS, MODES, tput, "Stores/s (guest wall clock)")
    C.bars(a2, WORKLOADS, MODES, traf, "PCIe bytes per Store (device counters)", logy=True)
    C.bars(a3, WORKLOADS, MODES, mmio, "doorbell (MMIO) bytes per Store", logy=True)
    a1.set_title("Fig. 10b: throughput")
    a2.set_title("Fig. 10c: PCIe traffic")
    a3.set_title("Fig. 10d: MMIO traffic")
    return [C.save(fig, figdir, "bandslim-fig10-workloads.png")]
