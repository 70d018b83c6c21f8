# SPDX-License-Identifier: GPL-2.0-or-later
"""Characterization paper Fig. 3: latency at low vs high index occupancy.

The paper wrote 1.53 M pairs (low) and 3 billion pairs (high) of 16-byte
keys and 512-byte values to a PM983 and saw reads 2x and writes 16.4x
slower once the hash index no longer fit the SSD's DRAM. Scaled down: the
index DRAM budget is shrunk to INDEX_FRAMES 4 KiB index pages, so LOW keys
fit it and HIGH keys need ~100x more index pages than it holds. After
loading, a run of uniform updates (Stores of existing keys, so the index
does not grow during the run) and uniform Retrieves measures the device's
simulated latency of each (kvbench's "device" deltas).
"""

import common as C
import verdicts as V

NAME = "char-fig3"
FIGURE = "Characterization Fig. 3"
PAPER = ("read and write latency up to 2x and 16.4x higher at high index occupancy "
         "(index larger than the SSD's DRAM)")
TARGET = "reads and writes slow down when the index outgrows its DRAM budget"
INDEX_PAGE = 4096
# run.py's scale for this experiment without --scale (all.sh, and so the page):
# every experiment fits all.sh's hour at it (docs/reproduce.md, "Scale")
DEFAULT_SCALE = 0.3
SCALE = ("paper: 1.53 M vs 3 billion pairs on a 3.84 TB drive; here 1 000 vs 60 000 pairs "
         "with the index DRAM budget shrunk to ~8 index pages, at --scale 1; the run phase "
         "keeps its 32 768 operations at any scale")
INDEX_FRAMES = 8
# The pm983 design's local index holds buffer-entries x page-size-bytes / 1 KiB
# keys (128 x 32 KiB / 1 KiB = 4 096, include/kvftl/tunables.def) and is merged
# into the global index, on one Store's time, when full. The run phase's updates
# span at least MERGE_CYCLES of it, so that its mean Store latency takes in the
# merges in steady state, not a window between two of them (the window was 2 000
# updates at scale 1 until 2026-12-03). Scale does not shrink it.
LOCAL_INDEX_KEYS = 128 * 32 * 1024 // 1024
MERGE_CYCLES = 4
# The paper's numbers (Fig. 3 and its text: "up to 2x for reads and even more
# 16.4x for writes") and the criteria, fixed before the run: a band on
# magnitude, and a direction-only "partly".
PAPER_READ, PAPER_WRITE = 2.0, 16.4
CRITERIA = {
    "read": V.near(PAPER_READ, 1.5, partly=lambda x: x > 1.2,
                   partly_text="above 1.2x (slower at high occupancy) but outside the band"),
    "write": V.near(PAPER_WRITE, 1.5, partly=lambda x: x > 1.2,
                    partly_text="above 1.2x (slower at high occupancy) but outside the band"),
    # write >> read: the write factor over the read factor, 16.4 / 2 = 8.2
    "asym": V.near(PAPER_WRITE / PAPER_READ, 2.0, partly=lambda x: x >= 2.0,
                   partly_text="the write factor is at least twice the read factor"),
}
# the Bloom filter takes at most 1/8 of the budget, index pages the rest
INDEX_DRAM = INDEX_FRAMES * INDEX_PAGE * 8 // 7 + 64
SETUP = ("Device preset pm983 with index-page-bytes=%d and index-dram-bytes=%d (about %d "
         "cached index pages) and latency=on, 16-byte keys, 512-byte values, sync engine; run "
         "phase: "
         "uniform updates and Retrieves 1:1, at least %d of them (%d updates: %d times the "
         "pm983 design's local index). " % (INDEX_PAGE, INDEX_DRAM, INDEX_FRAMES,
                                            2 * MERGE_CYCLES * LOCAL_INDEX_KEYS,
                                            MERGE_CYCLES * LOCAL_INDEX_KEYS, MERGE_CYCLES))


def boots(scale):
    low = 1000
    high = C.scaled(60000, scale, lo=20000)
    # uniform updates and Retrieves 1:1: twice the updates in operations
    ops = max(C.scaled(4000, scale, lo=1000), 2 * MERGE_CYCLES * LOCAL_INDEX_KEYS)
    steps = [C.Step(name, [("bench", C.kvbench(keys=n, key_size=16, value_size=512,
                                               load_order="uniform", ops=ops,
                                               mix="update=1,read=1", order="uniform",
                                               mode="prp")),
                           ("stats", C.STATS)], meta={"keys": n, "ops": ops})
             for name, n in (("low", low), ("high", high))]
    props = {"preset": "pm983", "index-page-bytes": INDEX_PAGE, "index-dram-bytes": INDEX_DRAM}
    # latency=on: a Store or Retrieve completes at its simulated time, so at queue depth 1
    # each operation's latency is its own; with latency off a guest running at icount's
    # pace submits faster than the device completes, and latencies measure the backlog
    return [C.Boot(NAME, steps, props=props, latency=True, timeout_s=1800)]


def analyze(raw, scale):
    pts = {}
    for name in ("low", "high"):
        b = C.part(raw, NAME, name, "bench")
        ph = C.phase(b, "run")
        st = C.part(raw, NAME, name, "stats")
        if not ph or not ph.get("device") or ph["errors"] or not st:
            continue
        lat = ph["device"]["sim_latency_us"]
        pts[name] = {"keys": b["key_count"], "ops": ph["ops"],
                     "store_mean_us": lat["store"].get("mean", 0.0),
                     "retrieve_mean_us": lat["retrieve"].get("mean", 0.0),
                     "store_p50_us": lat["store"]["p50"], "store_p99_us": lat["store"]["p99"],
                     "retrieve_p50_us": lat["retrieve"]["p50"],
                     "retrieve_p99_us": lat["retrieve"]["p99"],
                     "index_cache_misses": st["index_cache_misses"],
                     "index_cache_hits": st["index_cache_hits"],
                     "nand_pages_read": ph["device"]["nand_pages_read"]}
    rec = {"series": pts}
    if len(pts) < 2:
        rec.update(met=None, ours="incomplete run", why="a step did not run",
                   claims=judge(None, None))
        return rec
    lo, hi = pts["low"], pts["high"]

    def r(k):
        return hi[k] / lo[k] if lo[k] > 0 else float("inf")

    rec["numbers"] = {"retrieve_mean_ratio": round(r("retrieve_mean_us"), 2),
                      "store_mean_ratio": round(r("store_mean_us"), 2),
                      "retrieve_p50_ratio": round(r("retrieve_p50_us"), 2),
                      "retrieve_p99_ratio": round(r("retrieve_p99_us"), 2),
                      "store_p50_ratio": round(r("store_p50_us"), 2),
                      "store_p99_ratio": round(r("store_p99_us"), 2),
                      "low_keys": lo["keys"], "high_keys": hi["keys"],
                      "index_miss_rate_low": round(lo["index_cache_misses"] / max(1, lo[
                          "index_cache_misses"] + lo["index_cache_hits"]), 3),
                      "index_miss_rate_high": round(hi["index_cache_misses"] / max(1, hi[
                          "index_cache_misses"] + hi["index_cache_hits"]), 3)}
    table = [["occupancy", "keys", "Store mean us", "Store p50 us", "Store p99 us",
              "Retrieve mean us", "Retrieve p50 us", "Retrieve p99 us", "index cache misses",
              "NAND pages read"]]
    for name in ("low", "high"):
        x = pts[name]
        table.append([name, x["keys"], "%.1f" % x["store_mean_us"], "%.2f" % x["store_p50_us"],
                      "%.1f" % x["store_p99_us"], "%.1f" % x["retrieve_mean_us"],
                      "%.1f" % x["retrieve_p50_us"], "%.1f" % x["retrieve_p99_us"],
                      x["index_cache_misses"], x["nand_pages_read"]])
    rec["table"] = table
    # the paper's 2x and 16.4x are average latencies: the means are the comparison
    rr, rw = r("retrieve_mean_us"), r("store_mean_us")
    claims = judge(rr, rw)
    rec["claims"] = claims
    rec["met"] = V.overall(claims)
    rec["numbers"]["write_over_read_factor"] = round(rw / rr, 2) if rr else None
    rec["ours"] = ("%s: high vs low occupancy, mean simulated device latency: Retrieve %.2fx "
                   "(paper 2x), Store %.2fx (paper 16.4x), write/read %.2f (paper 8.2); p50 "
                   "%.2fx and %.2fx, p99 %.2fx and %.2fx" % (
                       V.summarize(claims), rr, rw, rw / rr if rr else float("nan"),
                       r("retrieve_p50_us"), r("store_p50_us"), r("retrieve_p99_us"),
                       r("store_p99_us")))
    if C.observed_design(raw) == "pm983":
        rec["why"] = why_pm983(lo, hi, rr, rw)
        return rec
    rec["why"] = ("an index page missing from DRAM (miss rate %.0f %% at high occupancy, %.0f %% "
                  "at low) costs a NAND read, and evicting a dirty one a program (tPROG 700 us), "
                  "before the operation proceeds. At low occupancy a Retrieve costs one NAND read "
                  "(%.0f us = one tR); at high occupancy the index read comes first and, when the "
                  "evicted page was dirtied by an update, a write-back, so the mean Retrieve is "
                  "%.1fx (paper: 2x) and the mean update %.1fx (paper: 16.4x). What we "
                  "contradict: the paper's writes slow down 8.2 times more than its reads; here "
                  "the two factors are about equal (%.2f), because in kvftl's hash index a "
                  "Retrieve and an update pay the same index-page miss and the same dirty "
                  "write-back when they evict, and an update's own write lands in the page "
                  "buffer. The PM983's write path, its index merging, is the pm983 design's "
                  "(index=pm983). Both papers' figures and ours are means over the run" % (
                      100 * rec["numbers"]["index_miss_rate_high"],
                      100 * rec["numbers"]["index_miss_rate_low"], lo["retrieve_p50_us"],
                      rr, rw, rw / rr if rr else float("nan")))
    return rec


def why_pm983(lo, hi, rr, rw):
    """The verdict's reasons under the pm983 design (docs/kvftl.md)."""
    return ("in the pm983 design a Store enters the DRAM local index without a flash read "
            "(Store p50 %.2f us at low and %.2f us at high occupancy); the Store that finds it "
            "full (%d keys) waits while all of it is merged into the global index, whose "
            "leaves at high occupancy are mostly not in DRAM (%d index page misses in the run, "
            "merges' and Retrieves' together; %d at low): each is read, updated and programmed "
            "when evicted. The merges are rare and long, so the mean Store is %.1fx (paper: "
            "16.4x) while its p50 and p99 "
            "stay %.2fx and %.2fx. A Retrieve outside the local index reads its leaf when it is "
            "not cached, then its blob: %.1fx (paper: 2x). What we contradict: the paper's "
            "writes slow down 8.2 times more than its reads; here %.2f times, because the local "
            "index spares each Store the flash and only a merge's share of the leaves' reads and "
            "programs reaches it; the paper's 'membership checking ... for each key' may cost "
            "the PM983 more per Store than this design's signature check in DRAM. Both papers' "
            "figures and ours are means over the run" % (
                lo["store_p50_us"], hi["store_p50_us"], LOCAL_INDEX_KEYS,
                hi["index_cache_misses"], lo["index_cache_misses"], rw,
                hi["store_p50_us"] / lo["store_p50_us"] if lo["store_p50_us"] else float("nan"),
                hi["store_p99_us"] / lo["store_p99_us"] if lo["store_p99_us"] else float("nan"),
                rr, rw / rr if rr else float("nan")))


def rejudge(rec):
    """The claims from a record's series (run.py --report-only --rejudge)."""
    pts = rec.get("series") or {}
    if "low" not in pts or "high" not in pts:
        return judge(None, None)
    lo, hi = pts["low"], pts["high"]
    return judge(hi["retrieve_mean_us"] / lo["retrieve_mean_us"],
                 hi["store_mean_us"] / lo["store_mean_us"])


def judge(rr, rw):
    """Fig. 3's claims with ours beside them (criteria: CRITERIA, fixed before the run)."""
    asym = rw / rr if rr and rw is not None else None
    return [
        V.measure("read (Retrieve) latency higher at high index occupancy, up to 2x",
                  "2x", rr, CRITERIA["read"], "%.2fx"),
        V.measure("write (Store) latency higher at high index occupancy, up to 16.4x",
                  "16.4x", rw, CRITERIA["write"], "%.2fx"),
        V.measure("writes slow down far more than reads (write factor / read factor)",
                  "8.2 (16.4x / 2x)", asym, CRITERIA["asym"], "%.2f"),
    ]


def plot(rec, figdir):
    pts = rec["series"]
    fig, (a1, a2) = C.figure(2, (10, 4.2))
    if "low" in pts and "high" in pts:
        lo, hi = pts["low"], pts["high"]
        ops = ["Retrieve", "Store"]
        ours = [hi["retrieve_mean_us"] / lo["retrieve_mean_us"] if lo["retrieve_mean_us"] else 0,
                hi["store_mean_us"] / lo["store_mean_us"] if lo["store_mean_us"] else 0]
        a1.bar([0, 1], ours, 0.5, color="tab:blue", label="ours (mean, high / low)")
        for i, v in enumerate(ours):
            a1.annotate("%.2fx" % v, (i, v), textcoords="offset points", xytext=(0, 3),
                        ha="center", fontsize=8)
        a1.plot([0, 1], [PAPER_READ, PAPER_WRITE], marker="*", ms=12, c="black", ls="none",
                label="paper (2x, 16.4x)")
        a1.axhline(1, c="gray", lw=0.8, ls=":", label="no change")
        a1.set_xticks([0, 1])
        a1.set_xticklabels(ops)
        a1.set_xlim(-0.6, 1.6)
        a1.set_ylim(0, max(ours + [PAPER_WRITE]) * 1.15)
        a1.set_ylabel("high / low occupancy, mean latency (linear)")
        a1.set_title("Fig. 3: slowdown at high index occupancy")
        C.legend_outside(a1)
    vals = {occ: {"Store": pts[occ].get("store_mean_us", 0.0),
                  "Retrieve": pts[occ].get("retrieve_mean_us", 0.0)} for occ in pts}
    C.bars(a2, ["Retrieve", "Store"], list(pts), vals, "mean latency, us (simulated, log)",
           logy=True)
    C.legend_outside(a2)
    a2.set_title("mean device latency by occupancy")
    C.caption(fig, "Device: kvssd preset pm983, index DRAM budget ~%d index pages; %s keys "
                   "(16 B keys, 512 B values), %s; device time." % (
                       INDEX_FRAMES, " vs ".join(str(pts[o]["keys"]) for o in ("low", "high")
                                                 if o in pts), C.scale_text(rec)))
    return [C.save(fig, figdir, "char-fig3-index-occupancy.png")]
