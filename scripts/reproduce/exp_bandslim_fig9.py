# SPDX-License-Identifier: GPL-2.0-or-later
"""BandSlim Fig. 9: hybrid transfer for 4 KiB + 4 B ... 4 KiB + 4 KiB values.

Workload A with values of 4096 + t bytes, t = 4, 8, ..., 4096, stored by prp
(two 4 KiB DMA units), inline (everything in commands), hybrid (the first
4 KiB by PRP, the tail inline) and adaptive. PCIe bytes per Store from the
device's counters.

inline-full runs over libkvssd's user-space PCI transport (kvbench --device
pci:nvme0) with BandSlim's full layout (35 value bytes in the head, 56 per
transfer). Hybrid has no full-layout form on this device (the full head has
no data pointer: docs/protocol.md 7.4), so hybrid is the stock layout on
either transport and only the stock series is run.
"""

import common as C

NAME = "bandslim-fig9"
FIGURE = "BandSlim Fig. 9"
PAPER = ("hybrid has the least PCIe traffic of baseline / piggyback / hybrid up to "
         "4 KiB + 2 KiB (\"up to 6 KB\"); piggyback beats the baseline only up to 4 KiB + 1 KiB")
TARGET = "hybrid transfer for 4 KiB + 4 B ... 4 KiB + 4 KiB values: traffic per method"

TAILS = [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
MODES = ["prp", "inline", "hybrid", "adaptive", "inline-full"]
KEY = 4
PCI = "pci:nvme0"  # libkvssd's user-space PCI transport (docs/host.md)


def inline_commands_full(value_bytes):
    """Commands of an inline Store in the full layout (keys <= 16 B): docs/host.md."""
    return 1 if value_bytes <= 35 else 1 + -(-(value_bytes - 35) // 56)
SCALE = ("paper: 1 M Stores per size; here up to 500 per size, fewer for inline/hybrid "
         "(~8 000 commands per point), at --scale 1")


def cmds(mode, v):
    if mode == "inline-full":
        return inline_commands_full(v)
    if mode == "inline":
        return C.inline_commands(v, KEY)
    if mode == "hybrid":
        return C.inline_commands(v % 4096, KEY) if v % 4096 else 1
    return 1


def boots(scale):
    steps = []
    for mode in MODES:
        for t in TAILS:
            v = 4096 + t
            n = C.ops_for_budget(cmds(mode, v), C.scaled(8000, scale), C.scaled(40, scale),
                                 C.scaled(500, scale))
            full = mode == "inline-full"
            steps.append(C.Step("%s-%d" % (mode, t), [("bench", C.kvbench(
                keys=n, key_size=KEY, value_size=v, load_order="sequential", no_run=True,
                mode="inline" if full else mode, device=PCI if full else None))],
                meta={"mode": mode, "tail": t, "ops": n}))
    return [C.Boot(NAME, steps, props={"preset": "cosmos"}, timeout_s=2400)]


def analyze(raw, scale):
    pts = {m: {} for m in MODES}
    for mode in MODES:
        for t in TAILS:
            ph = C.phase(C.part(raw, NAME, "%s-%d" % (mode, t), "bench"), "load")
            if not ph or not ph.get("device") or ph["errors"]:
                continue
            dev = ph["device"]
            pts[mode][t] = {"ops": ph["ops"],
                            "pcie_bytes_per_op": C.per_op(C.io_pcie_bytes(dev), ph["ops"]),
                            "commands_per_op": C.per_op(dev["commands"], ph["ops"]),
                            "guest_latency_us_p50": ph["latency_us"]["p50"]}
    rec = {"series": {m: {str(t): p for t, p in pts[m].items()} for m in MODES}}
    three = ("prp", "inline", "hybrid")
    if not all(len(pts[m]) == len(TAILS) for m in three):
        rec.update(met=None, ours="incomplete run", why="some points did not run")
        return rec
    best = {t: min(three, key=lambda m: pts[m][t]["pcie_bytes_per_op"]) for t in TAILS}
    hybrid_best_upto = max([t for t in TAILS if best[t] == "hybrid" and
                            all(best[u] == "hybrid" for u in TAILS if u <= t)] or [0])
    inline_beats_prp_upto = max([t for t in TAILS if pts["inline"][t]["pcie_bytes_per_op"] <
                                 pts["prp"][t]["pcie_bytes_per_op"]] or [0])
    rec["numbers"] = {
        "hybrid_least_traffic_up_to_tail_bytes": hybrid_best_upto,
        "inline_below_prp_up_to_tail_bytes": inline_beats_prp_upto,
        "hybrid_reduction_vs_prp_at_tail_4_pct": round(C.reduction(
            pts["hybrid"][4]["pcie_bytes_per_op"], pts["prp"][4]["pcie_bytes_per_op"]), 1),
    }
    full = len(pts["inline-full"]) == len(TAILS)
    if full:
        rec["numbers"]["inline_full_below_prp_up_to_tail_bytes"] = max(
            [t for t in TAILS if pts["inline-full"][t]["pcie_bytes_per_op"] <
             pts["prp"][t]["pcie_bytes_per_op"]] or [0])
    if "adaptive" in pts and len(pts["adaptive"]) == len(TAILS):
        rec["numbers"]["adaptive_picks_hybrid_up_to_tail_bytes"] = max(
            [t for t in TAILS if pts["adaptive"][t]["commands_per_op"] > 1] or [0])
    rec["ours"] = ("hybrid has the least traffic up to 4 KiB + %d B (%.1f %% below prp at "
                   "+4 B); inline is %s" % (
                       hybrid_best_upto, rec["numbers"]["hybrid_reduction_vs_prp_at_tail_4_pct"],
                       "below prp up to +%d B" % inline_beats_prp_upto if inline_beats_prp_upto
                       else "above prp at every tail (4 KiB alone is 147 commands)"))
    if full:
        f = rec["numbers"]["inline_full_below_prp_up_to_tail_bytes"]
        rec["ours"] += ("; with the full layout (pci transport) inline is %s (paper: up to "
                        "+1 KiB)" % ("below prp up to +%d B" % f if f
                                     else "above prp at every tail"))
    # the paper: hybrid best up to 6 KB (tail 2 KiB); half of that tail is the
    # shape with stock passthrough's 28 bytes per command
    rec["met"] = True if hybrid_best_upto >= 2048 else ("partly" if hybrid_best_upto >= 1024
                                                         else False)
    rec["why"] = ("the break-even tail is set by value bytes per command: 28 per 88-byte "
                  "command here (stock passthrough layout: CDW2-3, CDW11-15) against 56 in "
                  "BandSlim's driver (CDW2-15 minus the header), so piggybacked bytes cost "
                  "twice the traffic and both crossovers (hybrid vs prp, inline vs prp) move "
                  "to half the tail" + (
                      ". The full layout over libkvssd's pci transport restores the 56 bytes "
                      "per command for inline (its crossover with prp is +%d B, the paper's "
                      "+1 KiB), but this device accepts hybrid only with the stock head and "
                      "transfers (the full head has no data pointer and a stream keeps its "
                      "head's layout), so hybrid's tail still travels 28 bytes per command" % (
                          rec["numbers"]["inline_full_below_prp_up_to_tail_bytes"])
                      if full else "") if hybrid_best_upto < 2048 else
                  "same shape as the paper: hybrid wins while the tail is smaller than a "
                  "4 KiB unit's worth of commands")
    return rec


def plot(rec, figdir):
    plt = C.pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    for m in MODES:
        s = rec["series"].get(m, {})
        if not s:
            continue
        ts = sorted(int(t) for t in s)
        ax.plot(ts, [s[str(t)]["pcie_bytes_per_op"] for t in ts], marker="o",
                ls="--" if m.endswith("-full") else "-", label=m)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("tail bytes past 4 KiB (value = 4096 + tail)")
    ax.set_ylabel("PCIe bytes per Store")
    ax.set_title("Fig. 9a: hybrid transfer, 4-byte keys")
    ax.legend()
    return [C.save(fig, figdir, "bandslim-fig9-hybrid.png")]
