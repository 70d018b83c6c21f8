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

NAME = "char-fig3"
FIGURE = "Characterization Fig. 3"
PAPER = ("read and write latency up to 2x and 16.4x higher at high index occupancy "
         "(index larger than the SSD's DRAM)")
TARGET = "reads and writes slow down when the index outgrows its DRAM budget"
INDEX_PAGE = 4096
SCALE = ("paper: 1.53 M vs 3 billion pairs on a 3.84 TB drive; here 1 000 vs 60 000 pairs "
         "with the index DRAM budget shrunk to ~8 index pages, at --scale 1")
INDEX_FRAMES = 8
# the Bloom filter takes at most 1/8 of the budget, index pages the rest
INDEX_DRAM = INDEX_FRAMES * INDEX_PAGE * 8 // 7 + 64
SETUP = ("Device preset pm983 with index-page-bytes=%d and index-dram-bytes=%d (about %d "
         "cached index pages), 16-byte keys, 512-byte values, sync engine; run phase: "
         "uniform updates and Retrieves 1:1. " % (INDEX_PAGE, INDEX_DRAM, INDEX_FRAMES))


def boots(scale):
    low = 1000
    high = C.scaled(60000, scale, lo=20000)
    ops = C.scaled(4000, scale, lo=1000)
    steps = [C.Step(name, [("bench", C.kvbench(keys=n, key_size=16, value_size=512,
                                               load_order="uniform", ops=ops,
                                               mix="update=1,read=1", order="uniform",
                                               mode="prp")),
                           ("stats", C.STATS)], meta={"keys": n, "ops": ops})
             for name, n in (("low", low), ("high", high))]
    props = {"preset": "pm983", "index-page-bytes": INDEX_PAGE, "index-dram-bytes": INDEX_DRAM}
    return [C.Boot(NAME, steps, props=props, timeout_s=1800)]


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
        rec.update(met=None, ours="incomplete run", why="a step did not run")
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
    slow_r = r("retrieve_mean_us") > 1.2
    slow_w = r("store_mean_us") > 1.2
    rec["ours"] = ("high vs low occupancy, mean simulated device latency: Retrieve %.2fx, "
                   "Store %.2fx (p50 %.2fx and %.2fx, p99 %.2fx and %.2fx)" % (
                       r("retrieve_mean_us"), r("store_mean_us"), r("retrieve_p50_us"),
                       r("store_p50_us"), r("retrieve_p99_us"), r("store_p99_us")))
    rec["met"] = slow_r and slow_w
    rec["why"] = ("an index page missing from DRAM (miss rate %.0f %% at high occupancy, %.0f %% "
                  "at low) costs a NAND read, and evicting a dirty one a program (tPROG 700 us), "
                  "before the operation proceeds. At low occupancy a Retrieve costs one NAND read "
                  "(%.0f us = one tR); at high occupancy the index read comes first and, when the "
                  "evicted page was dirtied by an update, a write-back, so the mean Retrieve is "
                  "%.1fx (paper: 2x) and the mean update %.1fx (paper: 16.4x). Both papers' figures "
                  "and ours are means over the run; the medians (%.1fx, %.1fx) sit in a bimodal "
                  "distribution (operations with and without a write-back) and move between runs "
                  "with the guest's pace (TCG), the means much less. The paper's larger write "
                  "factor comes from the PM983's write path, which we do not know" % (
                      100 * rec["numbers"]["index_miss_rate_high"],
                      100 * rec["numbers"]["index_miss_rate_low"], lo["retrieve_p50_us"],
                      r("retrieve_mean_us"), r("store_mean_us"), r("retrieve_p50_us"),
                      r("store_p50_us")))
    return rec


def plot(rec, figdir):
    pts = rec["series"]
    fig, (a1, a2) = C.figure(2, (9, 3.6))
    vals = {occ: {"Store": pts[occ].get("store_mean_us", 0.0),
                  "Retrieve": pts[occ].get("retrieve_mean_us", 0.0)} for occ in pts}
    C.bars(a1, ["Store", "Retrieve"], list(pts), vals, "mean latency, us (simulated)", logy=True)
    vals = {occ: {"Store": pts[occ]["store_p99_us"], "Retrieve": pts[occ]["retrieve_p99_us"]}
            for occ in pts}
    C.bars(a2, ["Store", "Retrieve"], list(pts), vals, "p99 latency, us (simulated)", logy=True)
    a1.set_title("Fig. 3: low vs high index occupancy (mean)")
    a2.set_title("p99")
    return [C.save(fig, figdir, "char-fig3-index-occupancy.png")]
