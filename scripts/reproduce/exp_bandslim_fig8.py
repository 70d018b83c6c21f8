# SPDX-License-Identifier: GPL-2.0-or-later
"""BandSlim Fig. 3 and 8: PCIe traffic and traffic amplification vs value size.

Workload A (sequential 4-byte keys, fixed value size) stored by prp (the
baseline: the value by PRP, one 4 KiB DMA unit at least), inline
(piggybacking: the value inside the commands) and adaptive. Traffic is the
device's count of PCIe bytes (SQEs, CQEs, doorbells, PRP lists, data in
dma-unit pieces) for the load phase, less kvbench's own log-page read.

Two transports: the stock series go through Linux passthrough (/dev/ng0n1,
stock inline layout: 20 value bytes in a head with a 4-byte key, 28 per
transfer); the "-full"/"-pci" series through libkvssd's user-space PCI
transport (kvbench --device pci:nvme0), which writes whole SQEs and so
sends BandSlim's full layout (35 / 56 bytes), as BandSlim's driver does.
"""

import common as C

NAME = "bandslim-fig8"
FIGURE = "BandSlim Fig. 3 and 8"
PAPER = ("piggybacking cuts PCIe traffic by up to 97.9 % for 4-32 B values; "
         "the baseline's traffic is flat below 4 KiB and steps at every 4 KiB")
TARGET = "inline cuts traffic by >= 97 % for 4-32 B values; the 4 KiB staircase appears"

SIZES = [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 6144, 8192, 12288, 16384]
MODES = ["prp", "inline", "adaptive", "prp-pci", "inline-full", "adaptive-full"]
KEY = 4
PCI = "pci:nvme0"  # libkvssd's user-space PCI transport (docs/host.md)


def transport(mode):
    """kvbench's --mode and --device of a series: "-full"/"-pci" run over pci."""
    for suffix in ("-full", "-pci"):
        if mode.endswith(suffix):
            return mode[:-len(suffix)], PCI
    return mode, None


def inline_commands_full(value_bytes, key_bytes=4):
    """Commands of an inline Store in the full layout (keys <= 16 B): docs/host.md."""
    if value_bytes <= 35:
        return 1
    return 1 + -(-(value_bytes - 35) // 56)


def commands(mode, v):
    if mode == "inline":
        return C.inline_commands(v, KEY)
    if mode == "inline-full":
        return inline_commands_full(v, KEY)
    return 1
SCALE = ("paper: 1 M Stores per value size; here 1 000 per size for prp/adaptive, and for "
         "inline as many as fit ~20 000 commands (100 at 16 KiB), at --scale 1")


def boots(scale):
    steps = []
    for mode in MODES:
        for v in SIZES:
            n = C.ops_for_budget(commands(mode, v), C.scaled(20000, scale), C.scaled(100, scale),
                                 C.scaled(1000, scale))
            m, dev = transport(mode)
            steps.append(C.Step("%s-%d" % (mode, v), [("bench", C.kvbench(
                keys=n, key_size=KEY, value_size=v, load_order="sequential",
                no_run=True, mode=m, device=dev))], meta={"mode": mode, "value": v, "ops": n}))
    return [C.Boot(NAME, steps, props={"preset": "cosmos"}, timeout_s=2400)]


def analyze(raw, scale):
    pts = {m: {} for m in MODES}
    for mode in MODES:
        for v in SIZES:
            b = C.part(raw, NAME, "%s-%d" % (mode, v), "bench")
            ph = C.phase(b, "load")
            if not ph or not ph.get("device") or ph["errors"]:
                continue
            dev = ph["device"]
            io = C.io_pcie_bytes(dev)
            pts[mode][v] = {
                "ops": ph["ops"],
                "pcie_bytes_per_op": C.per_op(io, ph["ops"]),
                "taf": io / ph["user_bytes"],
                "commands_per_op": C.per_op(dev["commands"], ph["ops"]),
                "doorbell_bytes_per_op": C.per_op(dev["h2d_bytes"]["doorbell"], ph["ops"]),
                "guest_latency_us_p50": ph["latency_us"]["p50"],
            }
    rec = {"series": {m: {str(v): p for v, p in pts[m].items()} for m in MODES}}
    red = {}
    for v in SIZES:
        if v in pts["prp"] and v in pts["inline"]:
            red[v] = C.reduction(pts["inline"][v]["pcie_bytes_per_op"],
                                 pts["prp"][v]["pcie_bytes_per_op"])
    rec["inline_reduction_pct"] = {str(v): round(r, 2) for v, r in red.items()}
    # the full layout over the pci transport against the same (stock) baseline
    red_full = {v: C.reduction(pts["inline-full"][v]["pcie_bytes_per_op"],
                               pts["prp"][v]["pcie_bytes_per_op"])
                for v in SIZES if v in pts["prp"] and v in pts["inline-full"]}
    rec["inline_full_reduction_pct"] = {str(v): round(r, 2) for v, r in red_full.items()}
    # the transport itself adds nothing to a PRP Store's traffic
    rec["prp_pci_minus_prp_bytes_per_op"] = {
        str(v): round(pts["prp-pci"][v]["pcie_bytes_per_op"] - pts["prp"][v]["pcie_bytes_per_op"], 1)
        for v in SIZES if v in pts["prp"] and v in pts["prp-pci"]}
    small = [v for v in (4, 8, 16, 32) if v in red]
    small_full = [v for v in (4, 8, 16, 32) if v in red_full]
    # the staircase: prp traffic flat from 4 B to 4 KiB, then one more unit per 4 KiB
    stair = None
    p = pts["prp"]
    if all(v in p for v in (4, 1024, 4096, 6144, 8192, 12288, 16384)):
        flat = abs(p[4]["pcie_bytes_per_op"] - p[4096]["pcie_bytes_per_op"]) < 1
        steps = [round(p[v]["pcie_bytes_per_op"] - p[4096]["pcie_bytes_per_op"])
                 for v in (6144, 8192, 12288, 16384)]
        stair = {"flat_below_4k": flat, "extra_bytes_at_6k_8k_12k_16k": steps}
    rec["staircase"] = stair
    if len(small) < 4:
        rec.update(met=None, ours="incomplete run: %s" % sorted(red))
        return rec
    if len(small_full) == 4:
        return full_verdict(rec, pts, red, red_full, stair)
    worst = min(red[v] for v in small)
    best = max(red[v] for v in small)
    one_cmd = [v for v in small if pts["inline"][v]["commands_per_op"] == 1]
    rec["numbers"] = {"inline_reduction_best_pct": round(best, 2),
                      "inline_reduction_worst_4_32_pct": round(worst, 2),
                      "prp_bytes_per_op_32": round(p[32]["pcie_bytes_per_op"], 1),
                      "inline_bytes_per_op_32": round(pts["inline"][32]["pcie_bytes_per_op"], 1)}
    # one more 4 KiB unit past 4 KiB (6 KiB and 8 KiB alike), two at 12 KiB,
    # three at 16 KiB (plus the PRP list the kernel builds past two pages)
    e = stair["extra_bytes_at_6k_8k_12k_16k"] if stair else None
    stair_ok = bool(stair and stair["flat_below_4k"] and 4096 <= e[0] < 4096 + 64 and
                    abs(e[1] - e[0]) < 64 and 8192 <= e[2] < 8192 + 64 and
                    12288 <= e[3] < 12288 + 64)
    rec["ours"] = ("inline cuts traffic by %.1f %% (4-%d B, one command) down to %.1f %% at "
                   "32 B (%d commands); prp staircase %s" % (
                       best, max(one_cmd) if one_cmd else 0, red[32],
                       pts["inline"][32]["commands_per_op"],
                       "flat to 4 KiB, +4 KiB per 4 KiB step" if stair_ok else "NOT seen: %s" % stair))
    rec["met"] = worst >= 97.0 and stair_ok
    if worst < 97.0 and stair_ok:
        rec["met"] = "partly"
        rec["why"] = ("Stock Linux passthrough carries only CDW2-3 and CDW10-15 (32 bytes) from "
                      "user space, so with a 4-byte key the inline head holds 20 value bytes and "
                      "each transfer 28 (docs/protocol.md). BandSlim's own driver also fills "
                      "CDW4-9 (35 value bytes in the head): a 32-byte value fits one command "
                      "there but needs %d here, so 32 B reaches %.1f %% instead of >= 97 %%. "
                      "Values up to 20 B take one command and meet it (%.1f %%); one command "
                      "is what 32 B would cost with the full layout, which the device "
                      "implements (opcodes 89h/8Dh) but no stock-kernel path can submit." % (
                          pts["inline"][32]["commands_per_op"], red[32], best))
    else:
        rec["why"] = "per-op traffic is deterministic: counts of SQE/CQE/doorbell/data bytes"
    return rec


def stair_met(stair):
    """One more 4 KiB unit past 4 KiB (6 and 8 KiB alike), two at 12 KiB, three at 16 KiB."""
    e = stair["extra_bytes_at_6k_8k_12k_16k"] if stair else None
    return bool(stair and stair["flat_below_4k"] and 4096 <= e[0] < 4096 + 64 and
                abs(e[1] - e[0]) < 64 and 8192 <= e[2] < 8192 + 64 and
                12288 <= e[3] < 12288 + 64)


def full_verdict(rec, pts, red, red_full, stair):
    """The verdict from the full-layout series: BandSlim's driver fills CDW4-9 too."""
    small = (4, 8, 16, 32)
    worst = min(red_full[v] for v in small)
    best = max(red_full[v] for v in small)
    one_cmd = [v for v in small if pts["inline-full"][v]["commands_per_op"] == 1]
    ok_stair = stair_met(stair)
    p = pts["prp"]
    rec["numbers"] = {"inline_full_reduction_best_pct": round(best, 2),
                      "inline_full_reduction_worst_4_32_pct": round(worst, 2),
                      "inline_full_commands_per_op_32": pts["inline-full"][32]["commands_per_op"],
                      "inline_full_bytes_per_op_32": round(
                          pts["inline-full"][32]["pcie_bytes_per_op"], 1),
                      "inline_reduction_worst_4_32_pct": round(min(red[v] for v in small), 2),
                      "inline_reduction_32_pct": round(red[32], 2),
                      "prp_bytes_per_op_32": round(p[32]["pcie_bytes_per_op"], 1)}
    rec["ours"] = ("full layout (pci transport): inline cuts traffic by %.1f-%.1f %% for 4-32 B "
                   "(%s B in one command); stock passthrough layout: %.1f %% at 32 B (%d "
                   "commands); prp staircase %s" % (
                       worst, best, ", ".join(str(v) for v in one_cmd), red[32],
                       pts["inline"][32]["commands_per_op"],
                       "flat to 4 KiB, +4 KiB per 4 KiB step" if ok_stair else "NOT seen: %s" % stair))
    rec["met"] = worst >= 97.0 and ok_stair
    rec["why"] = ("BandSlim's driver fills CDW4-9 as well (the full layout: 35 value bytes in "
                  "the head, 56 per transfer); libkvssd's pci transport writes whole SQEs and "
                  "sends that layout, so a 32-byte value with a 4-byte key is one 88-byte "
                  "command (%.1f %% below prp's %.0f B). Stock Linux passthrough carries only "
                  "CDW2-3 and CDW10-15, where 32 B needs %d commands (%.1f %%): the stock "
                  "series are kept for comparison. Per-op traffic is deterministic (counts of "
                  "SQE/CQE/doorbell/data bytes)" % (
                      red_full[32], p[32]["pcie_bytes_per_op"],
                      pts["inline"][32]["commands_per_op"], red[32]))
    if not ok_stair or worst < 97.0:
        rec["met"] = "partly" if (worst >= 97.0 or ok_stair) else False
    return rec


def plot(rec, figdir):
    fig, (a1, a2) = C.figure(2, (10, 3.8))
    for m in MODES:
        s = rec["series"].get(m, {})
        if not s:
            continue
        ls = "--" if transport(m)[1] else "-"  # dashed: the pci transport
        C.plot_series(a1, s, "pcie_bytes_per_op", ls=ls, label=m)
        C.plot_series(a2, s, "taf", ls=ls, label=m)
    for a, t in ((a1, "PCIe bytes per Store"), (a2, "traffic amplification (PCIe / key+value)")):
        a.set_xscale("log", base=2)
        a.set_yscale("log")
        a.set_xlabel("value size (bytes)")
        a.set_ylabel(t)
        a.legend()
    a1.set_title("Fig. 3a/8: traffic per Store, 4-byte keys")
    a2.set_title("Fig. 3b: TAF")
    return [C.save(fig, figdir, "bandslim-fig8-traffic.png")]
