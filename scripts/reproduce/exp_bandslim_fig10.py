# SPDX-License-Identifier: GPL-2.0-or-later
"""BandSlim Fig. 10: workloads B, C, D, M by transfer method.

kvbench presets B, C, D, M (4-byte keys in random order; value mixes of the
paper) stored by prp (baseline), inline (piggyback) and adaptive. Traffic
and MMIO (doorbell) bytes are the device's counters. Throughput: the paper
measured it on the host, where every extra command is one more
synchronous passthrough round trip; the device's simulated time cannot see
that cost (a command's device time is nanoseconds), so throughput here is
the guest's wall clock (labelled), whose ratios follow commands per Store.
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
MODES = ["prp", "inline", "adaptive"]
TIE = 0.10  # within 10 % of the best counts as tied: TCG wall clock is noisy
ROUNDS = 3


def boots(scale):
    n = C.scaled(4000, scale, lo=200)
    # ROUNDS interleaved rounds; each configuration's best round counts, so a
    # burst of load from elsewhere on the host slows one round, not the result
    steps = [C.Step("%s-%s-r%d" % (w, m, r), [("bench", C.kvbench(preset=w, keys=n, mode=m))],
                    meta={"workload": w, "mode": m, "ops": n, "round": r})
             for r in range(ROUNDS) for w in WORKLOADS for m in MODES]
    return [C.Boot(NAME, steps, props={"preset": "cosmos"}, timeout_s=3000)]


def analyze(raw, scale):
    pts = {}
    for w in WORKLOADS:
        for m in MODES:
            rounds = [C.phase(C.part(raw, NAME, "%s-%s-r%d" % (w, m, r), "bench"), "load")
                      for r in range(ROUNDS)]
            rounds = [ph for ph in rounds if ph and ph.get("device") and not ph["errors"]]
            if not rounds:
                continue
            ph = max(rounds, key=lambda p: p["ops_per_s"])
            dev = ph["device"]
            pts.setdefault(w, {})[m] = {
                "ops": ph["ops"],
                "pcie_bytes": C.io_pcie_bytes(dev),
                "doorbell_bytes": dev["h2d_bytes"]["doorbell"] -
                C.admin_commands(dev) * C.DOORBELL_BYTES_PER_CMD,
                "commands_per_op": C.per_op(dev["commands"], ph["ops"]),
                "guest_ops_per_s": ph["ops_per_s"],
                "sim_ops_per_s": dev["sim_ops_per_s"],
                "taf": C.io_pcie_bytes(dev) / ph["user_bytes"],
            }
    rec = {"series": pts}
    if not all(w in pts and len(pts[w]) == len(MODES) for w in WORKLOADS):
        rec.update(met=None, ours="incomplete run", why="some workloads did not run")
        return rec
    table = [["workload", "method", "Stores", "commands/Store", "PCIe MB", "doorbell KB",
              "TAF", "guest Stores/s (wall clock, best of %d)" % ROUNDS, "traffic cut vs prp"]]
    best_ok = {}
    for w in WORKLOADS:
        top = max(pts[w][m]["guest_ops_per_s"] for m in MODES)
        best_ok[w] = pts[w]["adaptive"]["guest_ops_per_s"] >= (1 - TIE) * top
        for m in MODES:
            p = pts[w][m]
            table.append([w, m, p["ops"], "%.2f" % p["commands_per_op"],
                          "%.2f" % (p["pcie_bytes"] / 1e6), "%.1f" % (p["doorbell_bytes"] / 1e3),
                          "%.3f" % p["taf"], "%.0f" % p["guest_ops_per_s"],
                          "%.1f %%" % C.reduction(p["pcie_bytes"], pts[w]["prp"]["pcie_bytes"])])
    rec["table"] = table
    cut_m = C.reduction(pts["M"]["adaptive"]["pcie_bytes"], pts["M"]["prp"]["pcie_bytes"])
    cut_m_inline = C.reduction(pts["M"]["inline"]["pcie_bytes"], pts["M"]["prp"]["pcie_bytes"])
    rec["numbers"] = {"W(M)_adaptive_traffic_cut_pct": round(cut_m, 1),
                      "W(M)_inline_traffic_cut_pct": round(cut_m_inline, 1)}
    for w in WORKLOADS:
        rec["numbers"]["W(%s)_adaptive_best_or_tied" % w] = best_ok[w]
    rec["ours"] = ("W(M): adaptive cuts traffic %.1f %%, inline %.1f %%; adaptive best or tied "
                   "(within %d %%) on %s" % (cut_m, cut_m_inline, TIE * 100,
                                             ", ".join(w for w in WORKLOADS if best_ok[w]) or
                                             "none"))
    rec["met"] = cut_m >= 90.0 and all(best_ok.values())
    losers = [w for w in WORKLOADS if not best_ok[w]]
    rec["why"] = ("traffic from the device's counters; throughput by guest wall clock, which "
                  "tracks commands per Store" + (
                      "" if not losers else
                      "; adaptive is behind on %s: its 128-byte switch point (BandSlim's, from "
                      "the paper's Cosmos+) is not where inline and prp cost the same under "
                      "TCG; `kvbench calibrate` finds this machine's point" % ", ".join(losers)))
    return rec


def plot(rec, figdir):
    plt = C.pyplot()
    pts = rec["series"]
    fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(12, 3.6))
    tput = {m: {w: pts[w][m]["guest_ops_per_s"] for w in pts} for m in MODES}
    traf = {m: {w: pts[w][m]["pcie_bytes"] / 1e6 for w in pts} for m in MODES}
    mmio = {m: {w: pts[w][m]["doorbell_bytes"] / 1e3 for w in pts} for m in MODES}
    C.bars(a1, WORKLOADS, MODES, tput, "Stores/s (guest wall clock)")
    C.bars(a2, WORKLOADS, MODES, traf, "PCIe MB (device counters)", logy=True)
    C.bars(a3, WORKLOADS, MODES, mmio, "doorbell (MMIO) KB", logy=True)
    a1.set_title("Fig. 10b: throughput")
    a2.set_title("Fig. 10c: PCIe traffic")
    a3.set_title("Fig. 10d: MMIO traffic")
    return [C.save(fig, figdir, "bandslim-fig10-workloads.png")]
