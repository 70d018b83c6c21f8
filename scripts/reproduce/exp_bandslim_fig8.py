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

import bandslim as B
import common as C
import verdicts as V

NAME = "bandslim-fig8"
FIGURE = "BandSlim Fig. 3 and 8"
PAPER = ("piggybacking cuts PCIe traffic by up to 97.9 % for 4-32 B values; the baseline's "
         "traffic is flat below 4 KiB and steps at every 4 KiB (TAF ~130 at 32 B); piggyback's "
         "response time is about half the baseline's at <= 32 B, equal at 64 B, worse from 128 B")
TARGET = ("the claims table: traffic, TAF and the 4 KiB staircase from the device's counters; "
          "response times in device time (firmware model, cosmos preset)")

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
# run.py's scale for this experiment without --scale (all.sh, and so the page):
# every experiment fits all.sh's hour at it (docs/reproduce.md, "Scale")
DEFAULT_SCALE = 0.1
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
    return [C.Boot(NAME, steps, props=dict(B.TRANSFER_PROPS), latency=True, timeout_s=2400)]


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
                "taf": C.per_op(io, ph["ops"]) / v,  # the paper divides by the value
                "store_latency_us": B.store_latency_us(ph),
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


# The traffic counts follow from the transfer rules, not from anything the device decides:
# such a claim cannot come out otherwise, so it is by construction (verdicts.by_rule)
RULE_DMA = ("dma-unit-bytes = 4096, BandSlim's premise: a PRP Store moves its SQE (64 B), CQE "
            "(16 B), doorbells (8 B) and its value in whole 4 KiB units, so its traffic is "
            "88 B + 4096 B x ceil(value / 4 KiB) (+ a PRP list past two pages)")
RULE_ONE_CMD = ("the full inline layout: a Store of up to 35 value bytes is one command "
                "(64 + 16 + 8 = 88 B) against a PRP Store's 88 + 4096 = 4184 B "
                "(dma-unit-bytes = 4096): 1 - 88 / 4184 = 97.9 % at every size from 4 to 32 B")


def by_dma_rule(text, paper, x, crit, fmt):
    """A Baseline traffic claim: fixed by RULE_DMA."""
    return V.by_rule(text, paper, V.fnum(x, fmt), crit, RULE_DMA, measured=x == x,
                     would_hold=crit.judge(x))


RULE_LAYOUT = ("the full inline layout: a %d-byte value is 1 + ceil((%d - 35) / 56) = %d "
               "commands of 88 B (%d B) against a PRP Store's 88 + 4096 = 4184 B "
               "(dma-unit-bytes = 4096): %.2fx by arithmetic")


def by_layout(text, paper, x, crit, v):
    """A Piggyback / Baseline traffic ratio at value size v: fixed by RULE_LAYOUT."""
    n = inline_commands_full(v, KEY)
    return V.by_rule(text, paper, V.fnum(x, "%.2fx"), crit,
                     RULE_LAYOUT % (v, v, n, 88 * n, 88.0 * n / 4184), measured=x == x,
                     would_hold=crit.judge(x))


def rejudge(rec):
    """The claims from a record's series (run.py --report-only --rejudge)."""
    pts = {m: {int(v): p for v, p in (rec.get("series") or {}).get(m, {}).items()}
           for m in MODES}
    red = {v: C.reduction(pts["inline"][v]["pcie_bytes_per_op"], pts["prp"][v]["pcie_bytes_per_op"])
           for v in SIZES if v in pts["prp"] and v in pts["inline"]}
    red_full = {v: C.reduction(pts["inline-full"][v]["pcie_bytes_per_op"],
                               pts["prp"][v]["pcie_bytes_per_op"])
                for v in SIZES if v in pts["prp"] and v in pts["inline-full"]}
    if not all(v in red and v in red_full for v in (4, 8, 16, 32)):
        return []
    return full_verdict(dict(rec), pts, red, red_full, rec.get("staircase"))["claims"]


def full_verdict(rec, pts, red, red_full, stair):
    """The claims from the full-layout series (BandSlim's driver fills CDW4-9
    too: the pci transport's prp-pci / inline-full are the paper's Baseline /
    Piggyback); the stock passthrough series are kept for comparison."""
    small = (4, 8, 16, 32)
    p, pp, f = pts["prp"], pts["prp-pci"], pts["inline-full"]
    best = max(red_full[v] for v in small)
    worst = min(red_full[v] for v in small)
    one_cmd = [v for v in small if round(f[v]["commands_per_op"]) == 1]

    def g(d, v, k):
        return d[v][k] if v in d and d[v].get(k) is not None else float("nan")

    def rt_ratio(v):
        return B.ratio(g(f, v, "store_latency_us"), g(pp, v, "store_latency_us"))
    flat = B.ratio(g(pp, 4096, "store_latency_us"), g(pp, 4, "store_latency_us"))
    rise = B.ratio(g(pp, 8192, "store_latency_us"), g(pp, 4096, "store_latency_us"))
    small_rt = max(rt_ratio(v) for v in small)
    claims = [
        V.by_rule("Piggyback cuts PCIe traffic vs Baseline by up to 97.9 % for 4-32 B values "
                  "(Fig. 8; best of 4-32 B)", "97.9 %", "%.1f %%" % best,
                  B.points_near(97.9, 1, 3), RULE_ONE_CMD,
                  would_hold=B.points_near(97.9, 1, 3).judge(best),
                  note="worst of 4-32 B %.1f %%; stock passthrough layout: %.1f %% at 32 B (%d "
                  "commands)" % (worst, red[32], pts["inline"][32]["commands_per_op"])),
        by_dma_rule("Baseline's traffic is the same for every value up to 4 KiB (Fig. 3a/8: "
                    "traffic at 4 KiB over 4 B)", "1.00x",
                    B.ratio(g(p, 4096, "pcie_bytes_per_op"), g(p, 4, "pcie_bytes_per_op")),
                    B.band_crit(0.99, 1.01, 0.95, 1.05), "%.3fx"),
        by_dma_rule("Baseline's traffic doubles at the 4 KiB boundary: 5-8 KiB like 8 KiB "
                    "(Fig. 3a: traffic at 8 KiB over 4 KiB)", "2x",
                    B.ratio(g(p, 8192, "pcie_bytes_per_op"), g(p, 4096, "pcie_bytes_per_op")),
                    V.near(2.0, 1.05, lambda x: x > 1.2, "above 1.2x"), "%.3fx"),
        by_dma_rule("1 KB and 4 KB values move about 4 GB per 1 M Stores (Fig. 3a; ours: 1 KiB)",
                    "~4 GB", g(p, 1024, "pcie_bytes_per_op") * 1e6 / 1e9,
                    V.within(4.0, 0.10, 0.25, " GB"), "%.2f GB"),
        by_dma_rule("TAF of a 32-byte value is ~130 (Fig. 3b; PCIe bytes / value bytes)", "~130",
                    g(p, 32, "taf"), V.within(130, 0.10, 0.25), "%.1f"),
        by_layout("Piggyback's traffic approaches Baseline's at 2 KB (piggyback / baseline)",
                  "~1x (below)", B.ratio(g(f, 2048, "pcie_bytes_per_op"),
                                         g(pp, 2048, "pcie_bytes_per_op")),
                  B.band_crit(0.75, 1.0, 0.5, 1.1), 2048),
        by_layout("Piggyback's traffic exceeds Baseline's at 4 KB (piggyback / baseline)", "> 1x",
                  B.ratio(g(f, 4096, "pcie_bytes_per_op"), g(pp, 4096, "pcie_bytes_per_op")),
                  V.at_least(1.0), 4096),
        # response time, device time (firmware model): BandSlim's is host-measured
        V.measure("Piggyback's response time is about half of Baseline's for 32 B and below "
                  "(Fig. 8; device time, worst of 4-32 B)", "~0.5x", small_rt,
                  V.near(0.5, 1.25, lambda x: x < 1.0, "below 1x"), "%.2fx",
                  note="device time is firmware time only; BandSlim's host-measured time "
                  "also has its driver's round trip per command"),
        V.measure("Piggyback's response time is almost identical to Baseline's at 64 B "
                  "(Fig. 8; device time)", "~1x", rt_ratio(64),
                  B.band_crit(0.9, 1.1, 0.8, 1.25), "%.2fx"),
        V.measure("Piggyback's response time degrades significantly from 128 B (Fig. 8; "
                  "device time, 128 B)", "> 1x, growing", rt_ratio(128),
                  V.at_least(1.5, 1.1), "%.2fx",
                  note="the paper attributes this to its driver's synchronous commands (host "
                  "time); here each transfer command costs fw-inline-fragment-ns (3 us)"),
        V.measure("Baseline's response time cascades like its traffic: flat below 4 KiB "
                  "(Fig. 3a; device time at 4 KiB over 4 B)", "flat",
                  flat, B.band_crit(0.95, 1.05, 0.9, 1.1), "%.3fx"),
        V.measure("... and higher past each 4 KiB boundary (Fig. 3a; device time at 8 KiB over "
                  "4 KiB)", "a step", rise, V.at_least(1.05, 1.0001), "%.3fx",
                  note="a step is one more 4 KiB DMA setup (fw-dma-setup-ns 600 ns); the PCIe "
                  "transfer itself takes no device time in this model"),
    ]
    rec["claims"] = claims
    rec["met"] = V.overall(claims)
    rec["numbers"] = {"inline_full_reduction_best_pct": round(best, 2),
                      "inline_full_reduction_worst_4_32_pct": round(worst, 2),
                      "inline_full_commands_per_op_32": f[32]["commands_per_op"],
                      "inline_full_bytes_per_op_32": round(f[32]["pcie_bytes_per_op"], 1),
                      "inline_reduction_worst_4_32_pct": round(min(red[v] for v in small), 2),
                      "inline_reduction_32_pct": round(red[32], 2),
                      "prp_bytes_per_op_32": round(p[32]["pcie_bytes_per_op"], 1),
                      "prp_taf_32": round(g(p, 32, "taf"), 1),
                      "store_latency_us_prp_pci_32": g(pp, 32, "store_latency_us"),
                      "store_latency_us_inline_full_32": g(f, 32, "store_latency_us"),
                      "store_latency_us_inline_full_128": g(f, 128, "store_latency_us")}
    rec["ours"] = ("%s. Full layout (pci transport): inline cuts traffic by %.1f-%.1f %% for "
                   "4-32 B (%s B in one command); device-time response of piggyback / "
                   "baseline %.2fx at <= 32 B, %.2fx at 64 B, %.2fx at 128 B" % (
                       V.summarize(claims), worst, best, ", ".join(str(v) for v in one_cmd),
                       small_rt, rt_ratio(64), rt_ratio(128)))
    rec["why"] = ("BandSlim's driver fills CDW4-9 as well (the full layout: 35 value bytes in "
                  "the head, 56 per transfer); libkvssd's pci transport writes whole SQEs and "
                  "sends that layout, so a 32-byte value with a 4-byte key is one 88-byte "
                  "command (%.1f %% below prp's %.0f B). Stock Linux passthrough carries only "
                  "CDW2-3 and CDW10-15, where 32 B needs %d commands (%.1f %%): the stock "
                  "series are kept for comparison. Traffic is counted (SQE/CQE/doorbell/data "
                  "bytes); TAF divides by the value bytes, as the paper does. Response time is "
                  "device time (kvftl's firmware model, cosmos preset, with its 512-entry "
                  "buffer absorbing every program, as the paper disabled NAND I/O): a one-"
                  "command Store costs fetch + probe + completion, a PRP Store adds a DMA "
                  "setup per 4 KiB, each inline transfer command 3 us; so piggybacking saves "
                  "only the DMA setup at <= 32 B, not half, and the paper's host round trips "
                  "are not device time" % (
                      red_full[32], p[32]["pcie_bytes_per_op"],
                      pts["inline"][32]["commands_per_op"], red[32]))
    return rec


def plot(rec, figdir):
    fig, (a1, a2, a3, a4) = C.figure(4, (18, 4.0))
    for m in MODES:
        s = rec["series"].get(m, {})
        if not s:
            continue
        ls = "--" if transport(m)[1] else "-"  # dashed: the pci transport
        C.plot_series(a1, s, "pcie_bytes_per_op", ls=ls, label=m)
        C.plot_series(a2, {v: p for v, p in s.items() if int(v) <= 1024}, "taf", ls=ls, label=m)
        if all(p.get("store_latency_us") for p in s.values()):
            C.plot_series(a3, s, "store_latency_us", ls=ls, label=m)
    for a, t in ((a1, "PCIe bytes per Store"), (a2, "TAF (PCIe bytes / value bytes)"),
                 (a3, "device time per Store (us)")):
        a.set_xscale("log", base=2)
        a.set_yscale("log")
        a.set_xlabel("value size (bytes)")
        a.set_ylabel(t)
    prp = rec["series"].get("prp", {})
    if "32" in prp:
        B.mark(a1, 32, prp["32"]["pcie_bytes_per_op"] * (1 - 0.979), "paper: -97.9 %")
        B.mark(a2, 32, 130, "paper: ~130")
    # piggyback / baseline response time on a linear axis: the paper's ratios marked
    pp, fl = rec["series"].get("prp-pci", {}), rec["series"].get("inline-full", {})
    xs = sorted(int(v) for v in fl if v in pp and fl[v].get("store_latency_us")
                and pp[v].get("store_latency_us"))
    if xs:
        a4.plot(xs, [fl[str(v)]["store_latency_us"] / pp[str(v)]["store_latency_us"] for v in xs],
                marker="o", label="inline-full / prp-pci (device time)")
        a4.set_xscale("log", base=2)
        for v, y, t in ((32, 0.5, "paper: ~0.5x"), (64, 1.0, "paper: ~1x")):
            B.mark(a4, v, y, t)
        a4.axhline(1.0, color="grey", lw=0.8)
        a4.set_xlabel("value size (bytes)")
        a4.set_ylabel("response time ratio (linear)")
        a4.legend(fontsize=7)
    a1.legend(fontsize=7)
    a1.set_title("Fig. 3a/8: traffic per Store, 4-byte keys")
    a2.set_title("Fig. 3b: TAF")
    a3.set_title("Fig. 3a/8: response time (device time)")
    a4.set_title("Fig. 8: piggyback / baseline")
    fig.suptitle(B.DEVICE_CAPTION + "; %s Stores per point at scale %s" % (
        "100-1000", rec.get("scale", 1)), fontsize=8)
    return [C.save(fig, figdir, "bandslim-fig8-traffic.png")]
