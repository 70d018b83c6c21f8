# SPDX-License-Identifier: GPL-2.0-or-later
"""Characterization paper Fig. 6: bandwidth over time under random updates.

The paper filled 80 % of a PM983 with 16-byte keys / 4 KB values, then
rewrote the same amount of data with random updates and saw bandwidth
drops from foreground GC. Scaled down: a small device (GEOMETRY), filled
to 80 % of its capacity (`kvssd info` nsze_bytes; a 4 KiB value with its
key and blob header occupies 5 KiB with the 1 KiB unit), then as many
uniform random updates as keys. While kvbench updates, the guest samples
the statistics log every SAMPLE_S seconds; bandwidth per interval is
Stores x 4 KiB / simulated time, with device times dilated by DILATION so
that the device, not the TCG guest, sets the pace (multiplied back).
"""

import common as C

NAME = "char-fig6"
FIGURE = "Characterization Fig. 6"
PAPER = "after filling 80 %, random updates trigger foreground GC and bandwidth drops"
TARGET = "bandwidth over time for random updates after filling 80 %: foreground GC dips"
DILATION = 20
SAMPLE_S = 0.1
SCALE = ("paper: 80 % of a 3.84 TB drive; here 80 % of a 192 MiB device (~29 000 pairs), "
         "one update per pair")
FOOTPRINT = 5120  # NAND bytes of one 16-byte key + 4 KiB value blob with the 1 KiB unit
GEOMETRY = {"channels": 1, "dies-per-channel": 2, "blocks-per-die": 48, "pages-per-block": 64}
SETUP = ("Device preset pm983 with channels=1, dies-per-channel=2, blocks-per-die=48, "
         "pages-per-block=64 (192 MiB raw), buffer-entries=8, device times dilated x%d; "
         "fill to 80 %% of nsze by NAND footprint, then one uniform update per key. " % DILATION)

KEYS_SH = ("K=$(( $(kvssd info -d /dev/ng0n1 --json | sed -n "
           "'s/.*\"nsze_bytes\":\\([0-9]*\\).*/\\1/p') * 8 / 10 / %d ))" % FOOTPRINT)


def boots(scale):
    load = KEYS_SH + "; " + C.kvbench(keys="$K", key_size=16, value_size=4096, no_run=True,
                                       load_order="sequential", mode="prp").replace("'$K'", "$K")
    upd = C.kvbench(no_load=True, keys="$K", ops="$K", mix="update=1", order="uniform",
                    key_size=16, value_size=4096, no_reset_stats=True,
                    mode="prp").replace("'$K'", "$K")
    series = (KEYS_SH + "; " + upd + " > /tmp/rp-upd.json & p=$!; "
              "while kill -0 $p 2>/dev/null; do kvssd stats --json; sleep %s; done; "
              "wait $p; kvssd stats --json; cat /tmp/rp-upd.json" % SAMPLE_S)
    props = C.dilated(dict(C.PM983_TIMING), DILATION)
    props.update({"preset": "pm983", "buffer-entries": 8})
    props.update(GEOMETRY)
    steps = [C.Step("gc", [("info", C.INFO), ("load", load), ("series", series)],
                    meta={"scale": scale})]
    return [C.Boot(NAME, steps, props=props, timeout_s=2400)]


def analyze(raw, scale):
    r = raw.get(NAME)
    rec = {"series": {}}
    if not r:
        rec.update(met=None, ours="did not run", why="")
        return rec
    p = r["parts"].get("gc/series") or {}
    samples = [j for j in p.get("jsons", []) if "sim_now_ns" in j]
    bench = [j for j in p.get("jsons", []) if "phases" in j]
    if len(samples) < 3:
        rec.update(met=None, ours="too few samples (%d)" % len(samples), why="")
        return rec
    t0 = samples[0]["sim_now_ns"]
    pts = []
    for a, b in zip(samples, samples[1:]):
        dt = (b["sim_now_ns"] - a["sim_now_ns"]) / 1e9
        ds = b["stores"] - a["stores"]
        if dt <= 0 or ds < 0:
            continue
        pts.append({"t_s": (b["sim_now_ns"] - t0) / 1e9 / DILATION,
                    "mb_per_s": ds * 4096 / dt * DILATION / 1e6,
                    "gc_runs": b["gc_runs"] - a["gc_runs"],
                    "fg_stalls": b["gc_foreground_stalls"] - a["gc_foreground_stalls"],
                    "stall_ms": (b["gc_stall_ns"] - a["gc_stall_ns"]) / 1e6 / DILATION,
                    "free_stripes": b["free_stripes"]})
    rec["series"] = {"points": pts}
    last = samples[-1]
    ld = C.part(raw, NAME, "gc", "load")
    keys = ld["key_count"] if ld else None
    err = bench[0]["phases"][-1]["errors"] if bench else None
    run = bench[0]["phases"][-1] if bench else None
    bound = bool(run and run.get("device") and C.device_bound(run))
    bw = [x["mb_per_s"] for x in pts if x["mb_per_s"] > 0]
    if not bw:
        rec.update(met=None, ours="no bandwidth samples", why="")
        return rec
    gc_pts = [x for x in pts if x["fg_stalls"] > 0]
    calm = [x["mb_per_s"] for x in pts if x["fg_stalls"] == 0 and x["gc_runs"] == 0]
    stalled = [x["mb_per_s"] for x in gc_pts]
    peak = max(calm) if calm else max(bw)
    low = min(stalled) if stalled else min(bw)
    rec["numbers"] = {"keys": keys, "samples": len(pts), "update_errors": err,
                      "gc_runs": last["gc_runs"], "gc_foreground_stalls":
                      last["gc_foreground_stalls"],
                      "bandwidth_before_gc_mb_s": round(sum(calm) / len(calm), 1) if calm else None,
                      "bandwidth_min_during_gc_mb_s": round(low, 1),
                      "bandwidth_mean_during_gc_mb_s": round(sum(stalled) / len(stalled), 1)
                      if stalled else None,
                      "waf": last["waf_milli"] / 1000.0,
                      "device_bound": bound}
    dips = bool(stalled) and low < 0.8 * peak
    rec["ours"] = ("%d foreground GC stalls; bandwidth %.0f MB/s before GC, down to %.0f MB/s "
                   "in intervals with foreground GC (WAF %.2f)" % (
                       last["gc_foreground_stalls"], rec["numbers"]["bandwidth_before_gc_mb_s"] or 0,
                       low, last["waf_milli"] / 1000.0))
    rec["met"] = dips and bound
    rec["why"] = ("updates invalidate random 5 KiB blobs across all blocks; once free blocks "
                  "reach the GC watermark a Store waits for a victim's valid data to be "
                  "relocated and the block erased" if dips else
                  "no foreground GC dip was seen at this scale")
    return rec


def plot(rec, figdir):
    pts = rec["series"]["points"]
    fig, ax = C.figure(figsize=(8, 3.6))
    ax.plot([p["t_s"] for p in pts], [p["mb_per_s"] for p in pts], lw=1, label="update bandwidth")
    g = [p for p in pts if p["fg_stalls"] > 0]
    ax.scatter([p["t_s"] for p in g], [p["mb_per_s"] for p in g], c="red", s=10,
               label="interval with foreground GC", zorder=3)
    ax.set_xlabel("device time (s, undilated)")
    ax.set_ylabel("MB/s (simulated)")
    ax.set_title("Characterization Fig. 6: random updates after an 80 % fill")
    ax.legend()
    return [C.save(fig, figdir, "char-fig6-gc.png")]
