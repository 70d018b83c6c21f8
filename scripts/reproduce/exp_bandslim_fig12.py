# SPDX-License-Identifier: GPL-2.0-or-later
"""BandSlim Fig. 12: packing policies block / all / selective / backfill.

Workloads B, C, D, M with adaptive transfer, one guest boot per packing
policy (a device property), on the cosmos preset's own geometry (BandSlim's
Cosmos+: 4 channels x 8 dies, 16 KiB pages, 512 buffer entries and so 512
DLT entries, as BandSlim caps the DLT at the buffer's entries) with every
device time (NAND, channel, memcpy rate and the firmware's per-command
times) dilated x DILATION, so that the device, not the TCG guest, is the
bottleneck (bandslim.py). Each workload loads WARM Stores (filling the page
buffer), then RUN more (kvbench's run phase of inserts, the same value
mix); from the run phase:

* response time (Fig. 12a): device time per Store = simulated time / Stores
  / DILATION: a QD1 host that takes no time of its own, the device busy;
  throughput (Fig. 12b) is its inverse;
* NAND data pages programmed, space utilisation (key+value bytes / bytes
  of the data pages programmed, Fig. 12c), bytes the controller copied to
  pack values and their copy time at the cosmos preset's 1000 B/us (Fig.
  12d), DLT backfills (`kvssd stats`).

A point counts as device-bound when its simulated time is at least twice
the guest's wall time; only then is its time the device's.
"""

import bandslim as B
import common as C
import verdicts as V

NAME = "bandslim-fig12"
FIGURE = "BandSlim Fig. 12"
PAPER = ("block worst on every workload; selective as poor as block on W(C) and within 4.5 % of "
         "all on W(B)/W(M); backfill best on W(B) and W(M), up to ~7 % over all, and (slides) "
         "as few NAND writes as all there; all best on W(C) and W(D); all copies the most, more "
         "as large values grow (M < B < D < C)")
TARGET = ("the claims table: response time and throughput in device time on the dilated "
          "Cosmos+ geometry, NAND pages, utilisation and copies from the device's counters")
WORKLOADS = ["B", "C", "D", "M"]
POLICIES = ["block", "all", "selective", "backfill"]
TIE = 0.02  # device time is deterministic: within 2 % counts as tied for best/worst
PAGE = 16384  # cosmos preset's page_size_bytes
SETUP = ("Device preset cosmos (4 channels x 8 dies, 512 buffer and DLT entries) with every "
         "device time (tR, tPROG, channel and memcpy rates, the five firmware times) dilated "
         "x%d and tBERS the preset's; adaptive transfer (library thresholds), sync engine, "
         "4-byte keys; each workload: a warm-up load, then a measured run phase of inserts "
         "(module docstring). " % B.DILATION)
SCALE = ("paper: 1 M Stores per workload; here 3 000 warm-up + 12 000 measured Stores per "
         "workload and policy, at --scale 1; not fewer, since the measured phase is not in a "
         "steady state (backfill's first 6 000 Stores run 3.6-15 % faster per Store than all "
         "12 000: docs/reproduce.md \"Scale\")")


def boots(scale):
    warm = C.scaled(3000, scale, lo=300)
    run = C.scaled(12000, scale, lo=1000)
    out = []
    for pol in POLICIES:
        steps = [C.Step(w, [B.SETTLE, ("bench", B.workload_bench(w, warm, run, mode="adaptive")),
                            ("stats", C.STATS)], meta={"workload": w, "warm": warm, "ops": run})
                 for w in WORKLOADS]
        out.append(C.Boot("%s-%s" % (NAME, pol), steps,
                          props=B.dilated_cosmos(packing=pol), timeout_s=2400))
    return out


def analyze(raw, scale):
    pts = {}
    for pol in POLICIES:
        for w in WORKLOADS:
            boot = "%s-%s" % (NAME, pol)
            ph = C.phase(C.part(raw, boot, w, "bench"), "run")
            st = C.part(raw, boot, w, "stats")
            if not (ph and ph.get("device") and not ph["errors"] and st):
                continue
            dev = ph["device"]
            us = B.per_store_us(ph)
            pages = dev["nand_data_pages_programmed"]
            pts.setdefault(w, {})[pol] = {
                "ops": ph["ops"],
                "us_per_store": us,
                "device_ops_per_s": 1e6 / us if us else float("nan"),
                "device_bound": C.device_bound(ph),
                "nand_pages": dev["nand_pages_programmed"],
                "data_pages": pages,
                # key+value bytes per byte of the data pages programmed: block
                # packing's 4 KiB alignment gaps and backfill's unfilled gaps count
                "utilization": ph["user_bytes"] / (pages * PAGE) if pages else float("nan"),
                "memcpy_bytes": st["memcpy_bytes"],
                "copy_us_per_store": st["memcpy_bytes"] / C.COSMOS_TIMING[
                    "dram-copy-bytes-per-us"] / ph["ops"],
                "dlt_backfills": st["dlt_backfills"],
            }
    rec = {"series": pts}
    if not all(w in pts and len(pts[w]) == len(POLICIES) for w in WORKLOADS):
        rec.update(met=None, ours="incomplete run", why="some policy/workload pairs did not run")
        return rec
    return judge(rec, pts)


# the paper's dip, two-sided (it replaced "yes if <= 6.5 %", kept on the page by revised())
CRIT_SEL_DIP = V.rule("yes if 2.5-6.5 % (the paper's 4.5 % +-2 points); partly if 0-15 % (a dip "
                      "of another size); else no (no dip: Selective as fast as All or faster)",
                      lambda x: 2.5 <= x <= 6.5, lambda x: 0 < x <= 15)


def rejudge(rec):
    """The claims from a record's series (run.py --report-only --rejudge)."""
    pts = rec.get("series") or {}
    if not all(w in pts and len(pts[w]) == len(POLICIES) for w in WORKLOADS):
        return []
    return judge(dict(rec), pts)["claims"]


def judge(rec, pts):
    def t(w, p):
        return pts[w][p]["us_per_store"]

    def fastest(w, p):
        return t(w, p) <= (1 + TIE) * min(t(w, q) for q in POLICIES)

    def slowest(w, p):
        return t(w, p) >= (1 - TIE) * max(t(w, q) for q in POLICIES)
    block_worst = [w for w in WORKLOADS if slowest(w, "block")]
    bf_best = [w for w in ("B", "M") if fastest(w, "backfill")]
    all_best = [w for w in ("C", "D") if fastest(w, "all")]
    sel_dip = max(100 * (1 - t(w, "all") / t(w, "selective")) for w in ("B", "M"))
    bf_lead = max(t(w, "all") / t(w, "backfill") for w in ("B", "M"))
    bf_pages = max(pts[w]["backfill"]["data_pages"] / max(1, pts[w]["all"]["data_pages"])
                   for w in ("B", "M"))
    all_copies = [w for w in WORKLOADS if pts[w]["all"]["memcpy_bytes"] >= max(
        pts[w][p]["memcpy_bytes"] for p in POLICIES)]
    order = sorted(WORKLOADS, key=lambda w: pts[w]["all"]["copy_us_per_store"])
    util_lower = [w for w in ("C", "D") if pts[w]["backfill"]["utilization"] <
                  pts[w]["all"]["utilization"]]
    bound = all(pts[w][p]["device_bound"] for w in WORKLOADS for p in POLICIES)

    def count(text, paper, have, n, note=""):
        crit = V.rule("yes if %d of %d; partly if 1-%d; else no" % (n, n, n - 1),
                      lambda x: x == n, lambda x: x >= 1)
        return V.measure(text, paper, len(have), crit, "%%d of %d" % n,
                         note=(note + "; " if note else "") + "holds on: %s" % (
                             ", ".join(have) or "none"))
    claims = [
        count("Block has the worst performance on every workload (Fig. 12a/b; device time per "
              "Store, within 2 % of the slowest)", "4 of 4", block_worst, 4),
        V.measure("Selective performs as poorly as Block on W(C) (Fig. 12b; selective / block "
                  "device time per Store)", "~1x", t("C", "selective") / t("C", "block"),
                  B.band_crit(0.95, 1.05, 0.87, 1.15), "%.3fx"),
        V.revised(V.measure("On W(B) and W(M) Selective's throughput dips by at most 4.5 % below "
                            "All's (Fig. 12b; the larger dip of the two)", "<= 4.5 %", sel_dip,
                            CRIT_SEL_DIP, "%.1f %%", span=(-100.0, 100.0)),
                  V.at_most(6.5, 15, " %").judge(sel_dip), V.at_most(6.5, 15, " %"),
                  "the one-sided bound passed Selective as fast as All or faster, which is no "
                  "dip; the dip is now judged around the paper's 4.5 %"),
        count("Backfill performs best on W(B) and W(M) (Fig. 12b; device time, within 2 % of "
              "the fastest)", "2 of 2", bf_best, 2),
        V.measure("Backfill's throughput is up to ~7 % above All's (Fig. 12b; the larger of W(B) "
                  "and W(M))", "1.07x", bf_lead, B.band_crit(1.03, 1.11, 1.0, 1.2), "%.3fx"),
        count("All performs best on W(C) and W(D) (Fig. 12b; device time, within 2 % of the "
              "fastest)", "2 of 2", all_best, 2),
        V.measure("Backfill writes as few NAND pages as All on W(B) and W(M) (BandSlim slides; "
                  "backfill / all data pages, the larger)", "~1x", bf_pages,
                  V.at_most(1.05, 1.25, "x"), "%.2fx"),
        count("All copies the most memory on every workload (Fig. 12d)", "4 of 4", all_copies, 4),
        V.measure("All's copy time grows as large values grow: M < B < D < C (Fig. 12d)",
                  "M < B < D < C", 1.0 if order == ["M", "B", "D", "C"] else 0.0,
                  V.rule("yes if that order; else no", lambda x: x == 1.0), "%.0f",
                  note="ours: " + " < ".join(order)),
        count("Backfill's space utilisation is below All's where large values are many "
              "(Fig. 12c; W(C), W(D))", "2 of 2", util_lower, 2),
    ]
    rec["claims"] = claims
    rec["met"] = V.overall(claims)
    table = [["workload", "policy", "device us/Store", "device Stores/s", "device-bound",
              "NAND data pages", "space utilisation", "memcpy MB", "copy us/Store", "backfills"]]
    for w in WORKLOADS:
        for p in POLICIES:
            x = pts[w][p]
            table.append([w, p, "%.2f" % x["us_per_store"], "%.0f" % x["device_ops_per_s"],
                          "yes" if x["device_bound"] else "no", x["data_pages"],
                          "%.3f" % x["utilization"], "%.2f" % (x["memcpy_bytes"] / 1e6),
                          "%.2f" % x["copy_us_per_store"], x["dlt_backfills"]])
    rec["table"] = table
    rec["numbers"] = {"all points device-bound": bound,
                      "backfill / all data pages (B, M)": " / ".join(
                          "%.2f" % (pts[w]["backfill"]["data_pages"] /
                                    max(1, pts[w]["all"]["data_pages"])) for w in ("B", "M")),
                      "all / backfill device time per Store (B, M)": " / ".join(
                          "%.3f" % (t(w, "all") / t(w, "backfill")) for w in ("B", "M"))}
    for w in WORKLOADS:
        rec["numbers"]["W(%s) device us per Store (block / all / selective / backfill)" % w] = \
            " / ".join("%.2f" % t(w, p) for p in POLICIES)
    rec["ours"] = "%s; device time per Store W(B): %s us, W(M): %s us (block / all / selective " \
        "/ backfill)" % (V.summarize(claims), " / ".join("%.2f" % t("B", p) for p in POLICIES),
                         " / ".join("%.2f" % t("M", p) for p in POLICIES))
    why = ["a Store's firmware time (~4-5 us: fetch, probe, DMA setup, completion) and the "
           "packing copies share Cosmos+'s one CPU, and under sync-programs (BandSlim's "
           "firmware busy-waits for the NAND when it takes a buffer entry) each page program "
           "holds it, one page at a time: device time per Store follows NAND pages per Store "
           "((tPROG 1 ms + transfer) / Stores per page) wherever DMA'd values leave 4 KiB-"
           "aligned gaps (block, selective, and backfill where its DMA Log Table cannot fill "
           "them), while all packs densely and pays its copies on the CPU (1000 B/us). Adaptive runs over stock "
           "Linux passthrough here (20 value bytes in the head, 28 per transfer command, 3 us "
           "of firmware time each), not BandSlim's full layout (35 / 56): the inline values of "
           "W(B), W(D) and W(M) cost more firmware time than on BandSlim's driver, which is "
           "what every policy pays alike on the CPU"]
    if not bound:
        why.append("some points were not device-bound (see the table), so their time is partly "
                   "the guest's pace")
    rec["why"] = "; ".join(why)
    return rec


def plot(rec, figdir):
    pts = rec["series"]
    fig, axs = C.figure(4, (18, 4.0))
    series = [
        ("device time per Store (us, linear)", lambda x: x["us_per_store"],
         "Fig. 12a: response time (device time)"),
        ("device Stores/s (linear)", lambda x: x["device_ops_per_s"], "Fig. 12b: throughput"),
        ("space utilisation", lambda x: x["utilization"], "Fig. 12c: utilisation"),
        ("copy time per Store (us at 1000 B/us)", lambda x: x["copy_us_per_store"],
         "Fig. 12d: memory copies"),
    ]
    for ax, (lab, f, title) in zip(axs, series):
        vals = {p: {w: f(pts[w][p]) for w in pts if p in pts[w]} for p in POLICIES}
        C.bars(ax, WORKLOADS, POLICIES, vals, lab, title=title)
    if "B" in pts and "all" in pts["B"]:
        # the paper's ~7 % lead of backfill over all on W(B)
        wb = WORKLOADS.index("B")
        B.mark(axs[1], wb + 0.3, pts["B"]["all"]["device_ops_per_s"] * 1.07,
               "paper: backfill +7 % over all")
    fig.suptitle(B.DEVICE_CAPTION + ", 512 buffer/DLT entries, every device time dilated x%d; "
                 "3 000 warm-up + 12 000 measured Stores per point at scale %s" % (
                     B.DILATION, rec.get("scale", 1)), fontsize=8)
    return [C.save(fig, figdir, "bandslim-fig12-packing.png")]
