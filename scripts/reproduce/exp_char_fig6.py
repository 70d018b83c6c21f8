# SPDX-License-Identifier: GPL-2.0-or-later
"""Characterization paper Fig. 6b/6c: bandwidth over time under uniform
random and pseudo-random updates.

The paper filled 80 % of a PM983 with 16-byte keys / 4 KB values, then
rewrote the same amount of data with uniform random updates (Fig. 6b) or
pseudo-random ones (Fig. 6c: "a small sliding window across the whole
distribution of keys from the insert phase, keys chosen at random within
the window") and saw bandwidth drops from foreground GC. Scaled down: a
small device (GEOMETRY), filled to 80 % of its capacity (`kvssd info`
nsze_bytes) by the NAND footprint a pair really takes, which the guest
measures first (PROBE pairs stored, `kvssd info` nuse_bytes / PROBE: the
pm983 preset places blobs of 1 KiB and more at byte granularity and six
4 KiB blobs fit a 24.5 KiB page's data area, so it is not a fixed 5 KiB),
then as many updates as keys: uniform (kvbench --order uniform) or
pseudo-random (--order window --window-keys WINDOW: random within a window
of WINDOW keys that moves across the key space). While kvbench updates,
the guest samples the statistics log every SAMPLE_S seconds; bandwidth per
interval is Stores x 4 KiB / simulated time, with device times dilated by
DILATION so that the device, not the TCG guest, sets the pace (multiplied
back).
"""

import common as C
import verdicts as V

NAME = "char-fig6"
FIGURE = "Characterization Fig. 6b/6c"
PAPER = ("after filling 80 %, uniform random (6b) and pseudo-random sliding-window (6c) updates "
         "trigger foreground GC in the KV-SSD and its bandwidth drops")
TARGET = ("the claims table: foreground GC stalls and the bandwidth drop in simulated time, for "
          "uniform and sliding-window updates")
DILATION = 20
SAMPLE_S = 0.1
PROBE = 1024    # pairs stored to measure one pair's footprint
WINDOW = 1024   # keys per sliding window (kvbench's default); the paper gives none
SCALE = ("paper: 80 %% of a 3.84 TB drive; here 80 %% of a 192 MiB device (~25 000 pairs), "
         "one update per pair, uniform and sliding-window (%d keys)" % WINDOW)
GEOMETRY = {"channels": 1, "dies-per-channel": 2, "blocks-per-die": 48, "pages-per-block": 64}
SETUP = ("Device preset pm983 with channels=1, dies-per-channel=2, blocks-per-die=48, "
         "pages-per-block=64 (192 MiB raw), buffer-entries=8, device times dilated x%d; "
         "fill to 80 %% of nsze by the measured footprint per pair, then one update per key. "
         % DILATION)
ORDERS = {"gc": ("uniform", {"order": "uniform"}),
          "pr": ("sliding window", {"order": "window", "window_keys": WINDOW})}

_INFO_FIELD = ("$(kvssd info -d /dev/ng0n1 --json | sed -n 's/.*\"%s\":\\([0-9]*\\).*/\\1/p')")
# the footprint of one pair, measured, then the key count of an 80 % fill
KEYS_SH = ("F=$(( %s / %d )); K=$(( %s * 8 / 10 / F ))" % (
    _INFO_FIELD % "nuse_bytes", PROBE, _INFO_FIELD % "nsze_bytes"))

GET_K = "K=$(cat /tmp/rp-keys)"  # the key count the step's size part computed


def _load(n):
    return C.kvbench(keys=n, key_size=16, value_size=4096, no_run=True,
                     load_order="sequential", mode="prp")


def boots(scale):
    probe = _load(PROBE)
    size = ("%s; echo $K > /tmp/rp-keys; "
            "echo \"{\\\"footprint_bytes\\\": $F, \\\"keys\\\": $K}\"" % KEYS_SH)
    load = GET_K + "; " + _load("$K").replace("'$K'", "$K")
    steps = []
    for name, (_, order) in ORDERS.items():
        upd = C.kvbench(no_load=True, keys="$K", ops="$K", mix="update=1", key_size=16,
                        value_size=4096, no_reset_stats=True, mode="prp",
                        **order).replace("'$K'", "$K")
        series = (GET_K + "; " + upd + " > /tmp/rp-upd.json & p=$!; "
                  "while kill -0 $p 2>/dev/null; do kvssd stats --json; sleep %s; done; "
                  "wait $p; kvssd stats --json; cat /tmp/rp-upd.json" % SAMPLE_S)
        # the footprint is measured on the fresh device (PROBE pairs, then their
        # nuse); the load then overwrites those PROBE keys among its own
        steps.append(C.Step(name, [("info", C.INFO), ("probe", probe), ("size", size),
                                   ("load", load), ("series", series)],
                            meta={"scale": scale, "order": order}))
    props = C.dilated(dict(C.PM983_TIMING), DILATION)
    props.update({"preset": "pm983", "buffer-entries": 8})
    props.update(GEOMETRY)
    return [C.Boot(NAME, steps, props=props, timeout_s=2400)]


def series(raw, step):
    """The bandwidth samples of one update run and its summary numbers."""
    r = raw.get(NAME)
    p = (r or {}).get("parts", {}).get(step + "/series") or {}
    samples = [j for j in p.get("jsons", []) if "sim_now_ns" in j]
    bench = [j for j in p.get("jsons", []) if "phases" in j]
    if len(samples) < 3:
        return None
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
    last = samples[-1]
    run = bench[0]["phases"][-1] if bench else None
    # before GC: the intervals before the first foreground stall (background GC
    # may already run there: at an 80 % fill it starts with the first updates)
    first = next((i for i, x in enumerate(pts) if x["fg_stalls"] > 0), len(pts))
    calm = [x["mb_per_s"] for x in pts[:first]]
    stalled = [x["mb_per_s"] for x in pts if x["fg_stalls"] > 0]
    size = C.part(raw, NAME, step, "size") or {}
    return {"points": pts,
            "numbers": {"keys": size.get("keys"), "footprint_bytes": size.get("footprint_bytes"),
                        "samples": len(pts),
                        "update_errors": run["errors"] if run else None,
                        "gc_runs": last["gc_runs"],
                        "gc_foreground_stalls": last["gc_foreground_stalls"],
                        "bandwidth_before_gc_mb_s": round(sum(calm) / len(calm), 1)
                        if calm else None,
                        "bandwidth_min_during_gc_mb_s": round(min(stalled), 1)
                        if stalled else None,
                        "bandwidth_mean_during_gc_mb_s": round(sum(stalled) / len(stalled), 1)
                        if stalled else None,
                        "waf": last["waf_milli"] / 1000.0,
                        "device_bound": bool(run and run.get("device") and
                                             C.device_bound(run))}}


def analyze(raw, scale):
    rec = {"series": {}}
    if not raw.get(NAME):
        rec.update(met=None, ours="did not run", why="")
        return rec
    claims, nums = [], {}
    for step, (label, _) in ORDERS.items():
        s = series(raw, step)
        fig = "6b" if step == "gc" else "6c"
        if not s:
            claims.append(V.claim("%s updates trigger foreground GC (Fig. %s)" % (
                label.capitalize(), fig), "yes", "n/a", "yes if >= 1 stall", None,
                "too few samples"))
            continue
        rec["series"]["points" if step == "gc" else "points_" + step] = s["points"]
        n = s["numbers"]
        nums.update(("%s: %s" % (label, k), v) for k, v in n.items())
        before, low = n["bandwidth_before_gc_mb_s"], n["bandwidth_min_during_gc_mb_s"]
        drop = low / before if before and low is not None else float("nan")
        bound = "" if n["device_bound"] else "; the run was not device-bound"
        claims += [
            V.measure("%s updates after an 80 %% fill trigger foreground GC (Fig. %s; stalls)" % (
                label.capitalize(), fig), "yes", n["gc_foreground_stalls"],
                V.at_least(1), "%d", note="WAF %.2f%s" % (n["waf"], bound)),
            V.measure("... and the bandwidth drops while GC stalls writes (Fig. %s; lowest "
                      "interval with foreground GC over the mean before GC)" % fig, "a drop",
                      drop, V.at_most(0.5, 0.8, "x"), "%.2fx",
                      note="%s MB/s before, %s MB/s lowest" % (C.fmt(before), C.fmt(low)) + (
                          "" if before else "; not measured: the first of the %d samples (every "
                          "%g s of guest time) already holds a foreground stall, so no interval "
                          "before GC was sampled" % (n["samples"], SAMPLE_S))),
        ]
    rec["claims"] = claims
    rec["numbers"] = nums
    rec["met"] = V.overall(claims)
    rec["ours"] = V.summarize(claims) + "; " + "; ".join(
        "%s: %s stalls, %s MB/s before GC, down to %s MB/s" % (
            label, nums.get(label + ": gc_foreground_stalls"),
            C.fmt(nums.get(label + ": bandwidth_before_gc_mb_s")),
            C.fmt(nums.get(label + ": bandwidth_min_during_gc_mb_s")))
        for _, (label, _) in ORDERS.items())
    rec["why"] = ("updates invalidate 4 KiB blobs across the blocks; once free blocks reach the "
                  "GC watermark a Store waits for a victim's valid data to be relocated and the "
                  "block erased. A sliding window invalidates a window's blobs together, so its "
                  "victims hold less valid data than uniform updates leave; both still stall")
    return rec


def plot(rec, figdir):
    s = rec["series"]
    runs = [(k, lb) for k, lb in (("points", "uniform (6b)"), ("points_pr", "sliding window (6c)"))
            if s.get(k)]
    fig, axs = C.figure(max(1, len(runs)), (8 * max(1, len(runs)), 3.8))
    axs = axs if len(runs) > 1 else [axs]
    for ax, (k, lb) in zip(axs, runs):
        pts = s[k]
        ax.plot([p["t_s"] for p in pts], [p["mb_per_s"] for p in pts], lw=1,
                label="update bandwidth")
        g = [p for p in pts if p["fg_stalls"] > 0]
        if g:
            ax.scatter([p["t_s"] for p in g], [p["mb_per_s"] for p in g], c="red", s=10,
                       label="interval with foreground GC", zorder=3)
        ax.set_xlabel("device time (s, undilated)")
        ax.set_ylabel("MB/s (simulated, linear)")
        ax.set_title("Characterization Fig. 6: %s updates after an 80 %% fill" % lb)
        ax.legend(fontsize=7)
    fig.suptitle("device: pm983 preset, 1 channel x 2 dies, 48 blocks x 64 pages of 32 KiB "
                 "(192 MiB), 8 buffer entries, device times dilated x%d; 16 B keys, 4 KiB "
                 "values (scale %s)" % (DILATION, rec.get("scale", 1)), fontsize=8)
    return [C.save(fig, figdir, "char-fig6-gc.png")]
