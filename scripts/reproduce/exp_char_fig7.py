# SPDX-License-Identifier: GPL-2.0-or-later
"""Characterization paper Fig. 7: space amplification vs value size.

Device preset pm983 (32 KiB pages, 1 KiB placement unit like the Samsung
PM983 the paper measured). For each value size: format, store N pairs of
16-byte keys, then read the device's live NAND bytes and live key+value
bytes (`kvssd stats`); space amplification = NAND bytes / key+value bytes.
"""

import common as C

NAME = "char-fig7"
FIGURE = "Characterization Fig. 7"
PAPER = "17x space amplification for 50-byte values (1 KiB padding); ~1 for 1-4 KiB KV pairs"
TARGET = "~17x at 50-byte values (within +-25 %), ~1 for 1-4 KiB, with the 1 KiB unit"
SETUP = "Device preset pm983 (placement-unit-bytes 1024), 16-byte keys, sequential Stores. "

SIZES = [50, 100, 200, 500, 1000, 1500, 2000, 2500, 3000, 3500, 4000]
KEY = 16
SCALE = "paper: device filled by KVbench; here 3 000 pairs per value size, at --scale 1"


def boots(scale):
    n = C.scaled(3000, scale, lo=200)
    steps = [C.Step("v%d" % v, [("bench", C.kvbench(keys=n, key_size=KEY, value_size=v,
                                                    load_order="sequential", no_run=True,
                                                    mode="prp")),
                                ("stats", C.STATS)], meta={"value": v, "ops": n})
             for v in SIZES]
    return [C.Boot(NAME, steps, props={"preset": "pm983"}, timeout_s=1800)]


def analyze(raw, scale):
    pts = {}
    for v in SIZES:
        st = C.part(raw, NAME, "v%d" % v, "stats")
        if not st or not st.get("live_user_bytes"):
            continue
        pts[str(v)] = {"live_keys": st["live_keys"], "live_user_bytes": st["live_user_bytes"],
                       "live_nand_bytes": st["live_nand_bytes"],
                       "space_amp": st["live_nand_bytes"] / st["live_user_bytes"],
                       "device_space_amp": st["space_amp_milli"] / 1000.0}
    rec = {"series": pts}
    if "50" not in pts:
        rec.update(met=None, ours="incomplete run", why="the 50-byte point did not run")
        return rec
    a50 = pts["50"]["space_amp"]
    big = {v: pts[str(v)]["space_amp"] for v in SIZES if v >= 1000 and str(v) in pts}
    rec["numbers"] = {"space_amp_at_%dB" % v: round(pts[str(v)]["space_amp"], 3)
                      for v in SIZES if str(v) in pts}
    ok50 = abs(a50 - 17.0) <= 0.25 * 17.0
    okbig = bool(big) and max(big.values()) <= 1.3
    rec["ours"] = "%.1fx at 50 B; %.2f-%.2fx for 1000-4000 B values" % (
        a50, min(big.values()), max(big.values())) if big else "%.1fx at 50 B" % a50
    rec["met"] = True if ok50 and okbig else ("partly" if ok50 or okbig else False)
    why = []
    if ok50:
        why.append("a 16 + 50-byte pair plus its blob header is padded to one 1 KiB unit")
    if not okbig:
        why.append("kvftl rounds every blob (header + key + value) up to the 1 KiB unit, so a "
                   "1000-byte value takes 2 KiB (up to ~2x); the PM983 evidently pads only "
                   "small pairs to 1 KiB and packs larger ones tightly (the paper sees ~1 from "
                   "1 KiB up), which a 1 KiB placement unit cannot express")
    rec["why"] = "; ".join(why)
    return rec


def plot(rec, figdir):
    fig, ax = C.figure(figsize=(6.5, 3.8))
    C.plot_series(ax, rec["series"], "space_amp", label="emulated (1 KiB unit)")
    ax.axhline(17, ls="--", c="gray", lw=0.8)
    ax.annotate("paper: 17x at 50 B", (50, 17), textcoords="offset points", xytext=(8, 4),
                fontsize=8)
    ax.set_yscale("log")
    ax.set_xlabel("value size (bytes), 16-byte keys")
    ax.set_ylabel("space amplification (NAND / key+value)")
    ax.set_title("Characterization Fig. 7: space amplification")
    ax.legend()
    return [C.save(fig, figdir, "char-fig7-space-amp.png")]
